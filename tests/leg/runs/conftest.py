"""Leg tests: every run directory a test leaves behind is schema-checked and replayed."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .helpers import child_env, omg_cmd


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "damaged: the test damages run directories on purpose (skip the final check)"
    )


def run_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("events.jsonl") if "runs" in p.parts)


@pytest.fixture(autouse=True)
def every_run_dir_checked(
    request: pytest.FixtureRequest, tmp_path: Path, run_dir_check: Callable[[Path], dict]
) -> Iterator[None]:
    """After each test: schema-valid events and state, state.json == fold(events), replay equal."""
    yield
    if request.node.get_closest_marker("damaged"):
        return
    from omg.cli import status

    for rd in run_dirs(tmp_path):
        run_dir_check(rd)
        check_brackets(rd)
        out, code = status.replay(rd.parent, rd.name)
        assert code == 0, out


def check_brackets(rd: Path) -> None:
    """Legs 1, 2, 3… in file order; each opens with run_started and closes with at most one
    run_finished, its last event (a killed leg has none). Notes (events first recorded off the
    run branch, carrying ``note``) are facts from outside a leg, folded in where a leg found
    them: they are not a leg's own events."""
    from .helpers import events

    evs = [e for e in events(rd) if "note" not in e]
    legs = [e["leg"] for e in evs]
    assert legs == sorted(legs), "legs interleave in events.jsonl"
    assert sorted(set(legs)) == list(range(1, max(legs) + 1)), "leg numbers skip"
    for leg in set(legs):
        mine = [e["event"] for e in evs if e["leg"] == leg]
        assert mine[0] == "run_started" and mine.count("run_started") == 1, f"leg {leg}"
        assert mine.count("run_finished") <= 1, f"leg {leg}"
        assert "run_finished" not in mine[:-1], f"leg {leg} wrote after run_finished"


Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    """The CLI; `run` and `resume` get --no-commit (git is another test suite's business).

    In this process (``kit.omg_in_process``) unless ``process=True`` asks for the real CLI in a
    process of its own, or ``env`` holds secrets (the CLI re-executes itself without them)."""

    def call(
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        process: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        from kit import omg_in_process

        from omg.cli.scrub import holds_secrets

        argv = list(args)
        if argv and argv[0] in ("run", "resume"):
            argv.append("--no-commit")
        environ = env or child_env()
        if not process and not holds_secrets(environ):
            return omg_in_process(*argv, cwd=cwd or tmp_path, env=environ)
        return subprocess.run(
            omg_cmd(*argv),
            cwd=cwd or tmp_path,
            env=environ,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    return call
