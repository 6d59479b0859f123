"""The scrub: a command that may start children re-executes itself without its secrets in its
environment block (they come back over a pipe, in memory only) and marks itself non-dumpable;
a command that starts none, or an environment without a secret, costs nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from omg.cli import scrub
from omg.runners.process import MARK

CANARY = "ghs_scrubCanary7Qm2Lx9Vt4"

#: Prints how often it started (twice after a re-exec), then what /proc shows and what it holds.
PROBE = """
import ctypes, json, os, sys
print("started", os.getpid(), flush=True)
from omg.cli.scrub import scrub
scrub(sys.argv[1:])
block = open("/proc/self/environ", "rb").read().decode()
dumpable = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
print(json.dumps({"block": block, "environ": dict(os.environ), "dumpable": dumpable,
                  "argv": sys.argv[1:], "pid": os.getpid()}))
"""


def probe(args: list[str], **env: str) -> tuple[list[str], dict]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env={"PATH": os.environ["PATH"], "HOME": "/nonexistent", **env},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    *starts, last = done.stdout.splitlines()
    return starts, json.loads(last)


@pytest.mark.parametrize(
    ("name", "stays"),
    [
        ("PATH", True),
        ("HOME", True),
        ("LC_ALL", True),
        ("PYTHONPATH", True),
        (MARK, True),
        ("GITHUB_TOKEN", False),
        ("PYTHON_KEYRING_TOKEN", False),  # a secret name wins over a kept prefix
        ("OMG_INPUTS", False),  # may hold a secret input
        ("DEPLOY_URL", False),  # whatever Python does not need to start is moved
        ("CI", False),
    ],
)
def test_only_what_python_needs_to_start_stays_in_the_block(name: str, stays: bool) -> None:
    assert scrub.kept(name) is stays


def test_a_command_that_runs_nodes_reexecutes_without_its_secrets_in_the_block() -> None:
    starts, got = probe(
        ["run", "g.yaml"],
        GITHUB_TOKEN=CANARY,
        MY_SERVICE_PASSWORD="pw-scrub-canary-5521",
        OMG_INPUTS="key=input-scrub-canary-9",
        DEPLOY_URL="https://deploy.example",
    )
    assert len(starts) == 2 and starts[0].split()[1] == str(got["pid"])  # one exec, same pid
    for value in (CANARY, "pw-scrub-canary-5521", "input-scrub-canary-9", "deploy.example"):
        assert value not in got["block"]
    assert "PATH=" in got["block"]  # the block is there, only scrubbed
    env = got["environ"]  # …and everything is back in memory, the handoff gone
    assert env["GITHUB_TOKEN"] == CANARY and env["OMG_INPUTS"] == "key=input-scrub-canary-9"
    assert env["DEPLOY_URL"] == "https://deploy.example" and scrub.HANDOFF not in env
    assert got["argv"] == ["run", "g.yaml"] and got["dumpable"] == 0


def test_an_environment_without_a_secret_is_not_reexecuted() -> None:
    starts, got = probe(["run", "g.yaml"], DEPLOY_URL="https://deploy.example")
    assert len(starts) == 1 and "DEPLOY_URL=https://deploy.example" in got["block"]
    assert got["dumpable"] == 0  # still nothing for a node to attach to


@pytest.mark.parametrize("command", ["lint", "status", "graph", "--help"])
def test_a_command_that_starts_no_child_is_left_alone(command: str) -> None:
    starts, got = probe([command], GITHUB_TOKEN=CANARY)
    assert len(starts) == 1 and CANARY in got["block"] and got["dumpable"] == 1


def test_an_environment_larger_than_a_pipe_buffer_is_handed_over_whole() -> None:
    big = {f"BIG_SETTING_{i}": str(i) * (50 << 10) for i in range(4)}  # 200 KiB, 64 KiB pipes
    starts, got = probe(["leg"], GITHUB_TOKEN=CANARY, **big)
    assert len(starts) == 2 and CANARY not in got["block"]
    assert {k: got["environ"][k] for k in big} == big


def test_a_handoff_variable_that_names_no_pipe_is_ignored() -> None:
    starts, got = probe(["run"], **{scrub.HANDOFF: "0", "GITHUB_TOKEN": CANARY})
    assert len(starts) == 1 and got["environ"]["GITHUB_TOKEN"] == CANARY


NOBODY = 65534


@pytest.fixture
def workdir(tmp_path: Path) -> Iterator[Path]:
    """A directory omg can work in as the unprivileged user the next test may switch to."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    where = Path(tempfile.mkdtemp(prefix="omg-nobody-"))  # pytest's own tree is root's alone
    os.chmod(where, 0o777)
    yield where
    shutil.rmtree(where, ignore_errors=True)


def test_a_node_of_the_same_user_cannot_read_omgs_proc_files(workdir: Path) -> None:
    """Non-dumpable: even the scrubbed block, and omg's memory, are closed to its nodes.

    As root (which passes every such check) omg runs as an unprivileged user, as on a CI
    runner; the node proves the check can fail by reading its own file first."""
    tmp_path = workdir
    (tmp_path / "g.yaml").write_text(
        "name: peek\nnodes:\n  - id: peek\n    run: >-\n"
        "      head -c 5 /proc/self/environ; echo;\n"
        "      cat /proc/$PPID/environ /proc/$PPID/mem 2>&1 | tr '\\0' '\\n' | head -c 400\n"
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GITHUB_TOKEN": CANARY}
    argv = [sys.executable, "-m", "omg", "run", "g.yaml", "--no-commit", "--run-id", "r"]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv is not None, "util-linux's setpriv drops root for this test"
        argv = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = (tmp_path / ".omg" / "runs" / "r" / "artifacts" / "peek.out").read_text()
    assert seen.startswith(("PATH=", "HOME=", "GITHU", "LC_", "_OMG")), seen  # its own: readable
    assert seen.count("Permission denied") == 2, seen
    assert CANARY not in seen and "***" not in seen


def test_the_image_the_scrub_replaces_loads_only_the_scrub_and_the_secret_name_rule() -> None:
    """What the first image imports is start-up paid twice by every command holding a secret."""
    code = (
        "import sys; before = set(sys.modules); import omg.cli.scrub; "
        "print(sorted(set(sys.modules) - before))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = json.loads(done.stdout.replace("'", '"'))
    assert {m for m in loaded if m.startswith("omg")} == {
        "omg",
        "omg.cli",
        "omg.cli.scrub",
        "omg.secretname",
    }
    assert not {"dataclasses", "typing", "urllib.parse", "base64"} & set(loaded)
