"""Colour and cursor control on a terminal only: a pty gets coloured marks and verdicts (plain
with NO_COLOR, https://no-color.org), a pipe or a file never an escape code; what a node
printed never reaches the terminal as a control character."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from kit import clean_env, write_graph

from omg.cli.progress import Progress
from omg.cli.terminal import Paint, inert, may_colour, may_redraw

GREEN, RED = "\x1b[32m", "\x1b[31m"
GRAPH = """\
name: marks
nodes:
  - id: build
    run: 'true'
  - id: hostile
    depends_on: [build]
    run: printf 'boom\\033[2J\\033]0;pwned\\007'; exit 1
"""


def on_pty(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run ``argv`` with stdout and stderr on a terminal; what the terminal received."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower
        )
    finally:
        os.close(follower)
    got = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every holder of the terminal closed it
            break
        if not chunk:
            break
        got += chunk
    os.close(leader)
    return proc.wait(timeout=60), got.decode()


def omg(*args: str) -> list[str]:
    return [sys.executable, "-m", "omg", *args]


@pytest.mark.parametrize(
    ("env", "colour", "redraw"),
    [
        ({}, True, True),
        ({"NO_COLOR": "1"}, False, True),
        ({"NO_COLOR": ""}, True, True),  # no-color.org: only a non-empty value disables it
        ({"TERM": "dumb"}, False, False),
        ({"TERM": "xterm-256color", "NO_COLOR": "yes"}, False, True),
    ],
)
def test_a_terminal_gets_colour_unless_no_color_or_a_dumb_term(
    env: dict[str, str], colour: bool, redraw: bool
) -> None:
    leader, follower = pty.openpty()
    with os.fdopen(follower, "w") as tty:
        assert may_colour(tty, env) is colour and may_redraw(tty, env) is redraw
    os.close(leader)


def test_a_file_or_a_pipe_never_gets_colour(tmp_path: Path) -> None:
    r, w = os.pipe()
    with (tmp_path / "log").open("w") as file, os.fdopen(w, "w") as pipe:
        for stream in (file, pipe, io.StringIO()):
            assert not may_colour(stream, {}) and not may_redraw(stream, {})
    os.close(r)


def test_paint_colours_only_when_on() -> None:
    assert Paint(True)("PASS", "good") == f"{GREEN}PASS\x1b[0m"
    assert Paint(False)("PASS", "good") == "PASS" and Paint(True)("", "bad") == ""
    assert inert("a\x1b[2Jb\x07\tc\nd\x9b") == "a\\x1b[2Jb\\x07\tc\nd\\x9b"


def test_omg_run_on_a_terminal_colours_marks_and_verdicts(tmp_path: Path) -> None:
    write_graph(tmp_path, GRAPH, "g.yaml")
    code, seen = on_pty(omg("run", "g.yaml", "--no-commit"), tmp_path, clean_env(TERM="xterm"))
    assert code == 1, seen
    assert f"{GREEN}✓\x1b[0m build  {GREEN}PASS\x1b[0m" in seen  # the progress line
    assert f"{RED}✗\x1b[0m hostile  {RED}FAIL\x1b[0m" in seen
    assert f"{GREEN}PASS (exit-only)\x1b[0m" in seen  # the ledger's verdict cell
    # what the node printed is shown, never sent to the terminal
    assert "\x1b[2J" not in seen and "\x1b]0;pwned" not in seen and "\\x1b]0;pwned\\x07" in seen
    code, seen = on_pty(omg("status"), tmp_path, clean_env(TERM="xterm"))
    assert code == 0 and "failed" in seen
    rid = next(p.name for p in (tmp_path / ".omg" / "runs").iterdir())
    code, seen = on_pty(omg("status", rid), tmp_path, clean_env(TERM="xterm"))
    assert code == 0 and f"{RED}FAIL\x1b[0m" in seen and f"{GREEN}PASS (exit-only)" in seen


def test_omg_run_with_no_color_on_a_terminal_sends_no_colour(tmp_path: Path) -> None:
    write_graph(tmp_path, GRAPH, "g.yaml")
    env = clean_env(TERM="xterm", NO_COLOR="1")
    code, seen = on_pty(omg("run", "g.yaml", "--no-commit"), tmp_path, env)
    assert code == 1, seen
    assert "✓ build  PASS" in seen and "✗ hostile  FAIL" in seen
    assert "\x1b[3" not in seen and "\x1b[0m" not in seen  # no colour; erase-line may stay


def test_omg_run_into_a_pipe_and_a_file_writes_plain_text(tmp_path: Path) -> None:
    write_graph(tmp_path, GRAPH, "g.yaml")
    piped = subprocess.run(
        omg("run", "g.yaml", "--no-commit"), cwd=tmp_path, env=clean_env(TERM="xterm"),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert piped.returncode == 1 and "✓ build  PASS" in piped.stderr
    with (tmp_path / "out.log").open("w") as log:
        done = subprocess.run(
            omg("run", "g.yaml", "--no-commit"), cwd=tmp_path, env=clean_env(TERM="xterm"),
            stdout=log, stderr=subprocess.STDOUT, timeout=60,
        )  # fmt: skip
    written = (tmp_path / "out.log").read_text()
    assert done.returncode == 1 and "✗ hostile  FAIL" in written and "PASS (exit-only)" in written
    for text in (piped.stdout, piped.stderr, written):
        assert "\x1b" not in text and "\r" not in text


def test_omg_lint_colours_severities_on_a_terminal_only(tmp_path: Path) -> None:
    bad = write_graph(tmp_path, "name: x\nnodes:\n  - id: a\n    run: 'true'\n    bogus: 1\n")
    code, seen = on_pty(omg("lint", str(bad)), tmp_path, clean_env(TERM="xterm"))
    assert code == 1 and f": {RED}error\x1b[0m:" in seen and f"{RED}1 error(s)\x1b[0m" in seen
    code, seen = on_pty(omg("lint", str(bad)), tmp_path, clean_env(TERM="xterm", NO_COLOR="1"))
    assert code == 1 and ": error:" in seen and "\x1b" not in seen
    piped = subprocess.run(
        omg("lint", str(bad)), cwd=tmp_path, env=clean_env(TERM="xterm"), capture_output=True,
        text=True,
    )  # fmt: skip
    assert piped.returncode == 1 and ": error:" in piped.stdout and "\x1b" not in piped.stdout


def test_a_terminal_that_cannot_encode_the_marks_gets_escapes_not_a_crash(tmp_path: Path) -> None:
    write_graph(tmp_path, GRAPH, "g.yaml")
    done = subprocess.run(
        omg("run", "g.yaml", "--no-commit"), cwd=tmp_path,
        env=clean_env(PYTHONIOENCODING="ascii"), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "\\u2713 build" in done.stderr and "\\u2014" in done.stdout


def test_progress_lines_follow_the_stream_they_are_given() -> None:
    out = io.StringIO()
    with Progress(out) as progress:  # not a terminal: plain, never redrawn
        progress({"event": "node_started", "node_id": "n"}, {})
        progress({"event": "node_failed", "node_id": "n", "detail": "a\x1b[31mb"}, {})
    assert out.getvalue().splitlines() == ["▶ n  running…", "✗ n  FAIL  0.0s  a\\x1b[31mb"]
