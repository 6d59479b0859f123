"""Shared fixtures: running the real CLI, and checking run directories against the schemas."""

from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "schemas"

#: Test modules are kept as bytecode (pytest's assertion-rewritten .pyc in __pycache__, which
#: git ignores) even where the environment says not to write any (PYTHONDONTWRITEBYTECODE):
#: every worker collects all of them, and rewriting them costs each ~3 s on every run.
sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. Much of a worker's time is spent waiting on children it
    started (a leg killed at a random point, a fan-out wave, a CLI waiting out a 529, loopback
    servers), and a second worker per core fills those waits."""
    return 2 * (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


_validators: dict[str, Draft202012Validator] = {}


def pytest_configure(config: pytest.Config) -> None:
    """Once, in the process that starts the workers: the tests' scratch directories go to
    memory where the machine has a tmpfs at /dev/shm (the suite makes thousands of git
    repositories and run directories, and omg fsyncs at checkpoints; none of it has to survive
    the machine), and omg's modules are compiled to bytecode, so the `python -m omg` processes
    the tests start do not each compile them again when the environment says not to write
    bytecode (PYTHONDONTWRITEBYTECODE)."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller did both
        return
    shm = Path("/dev/shm")
    if (
        config.option.basetemp is None
        and "PYTEST_DEBUG_TEMPROOT" not in os.environ
        and shm.is_dir()
        and os.access(shm, os.W_OK | os.X_OK)
    ):
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(shm)  # pytest's documented temp root
    compileall.compile_dir(ROOT / "omg", quiet=1)


def schema_validator(name: str) -> Draft202012Validator:
    if name not in _validators:
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        _validators[name] = Draft202012Validator(schema)
    return _validators[name]


def check_run_dir(run_dir: Path) -> dict:
    """Validate state.json and every event line against the schemas; return the state (the
    fold of every event: state.json caught up).

    Also proves the snapshot is the fold of the stream (what `omg replay` checks).
    """
    from omg.state import fold
    from omg.state.store import RunDir, canonical_json

    events = list(RunDir(run_dir).read_events())  # events.jsonl, then its chunks
    for ev in events:
        errors = sorted(schema_validator("event").iter_errors(ev), key=str)
        assert not errors, f"event {ev} violates event.schema.json: {errors[0].message}"
    seqs = [ev["seq"] for ev in events]
    assert seqs == list(range(1, len(events) + 1)), "seq must count 1, 2, 3… in file order"
    state = json.loads((run_dir / "state.json").read_text())
    errors = sorted(schema_validator("state").iter_errors(state), key=str)
    assert not errors, f"state.json violates state.schema.json: {errors[0].message}"
    # a checkpoint: the fold of the events up to its seq (a killed leg's tail may follow it)
    upto = [ev for ev in events if ev["seq"] <= state["seq"]]
    assert canonical_json(fold(upto)) == (run_dir / "state.json").read_text()
    whole: dict = json.loads(canonical_json(fold(events)))
    return whole


@pytest.fixture
def run_dir_check() -> Callable[[Path], dict]:
    return check_run_dir


def child_env(**extra: str) -> dict[str, str]:
    """A clean environment for omg subprocesses (the kit's one scrub: ``kit.clean_env``)."""
    from kit import clean_env

    return clean_env(**extra)


OmgRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def omg(tmp_path: Path) -> OmgRunner:
    """Run the real `omg` CLI (`python -m omg`) in a directory; returns the completed process."""

    def run(
        *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "omg", *args],
            cwd=cwd or tmp_path,
            env=env or child_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return run
