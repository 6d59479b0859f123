"""`omg log RUN`: a run's whole event log — events.jsonl and every chunk after it — as one
stream in seq order: JSON lines exactly as recorded (``--json``, for jq) or a readable line per
event, filtered by node and kind; verified first (a damaged record: exit 3, nothing printed);
``--follow`` printing what a running leg appends, in another thread, until the leg ends."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kit import clean_env, omg_in_process, read_events, run_graph

from omg.state import empty_state
from omg.state.recorder import Recorder
from omg.state.store import RunDir
from tests.state.test_chunks import record
from tests.state.test_log import recorded


def log(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return omg_in_process("log", *args, "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)


@pytest.fixture
def run(tmp_path: Path) -> RunDir:
    """A run of 300 events: events.jsonl (128), events/0000000129.jsonl (128), …257 (44)."""
    rd = record(tmp_path / "runs" / "r", passes=149)
    assert [p.name for p in rd.segments()][1:] == ["0000000129.jsonl", "0000000257.jsonl"]
    return rd


def test_json_prints_every_chunk_in_seq_order_exactly_as_recorded(
    tmp_path: Path, run: RunDir
) -> None:
    done = log(tmp_path, "r", "--json")
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out == recorded(run)  # byte for byte, all 300, not events.jsonl's first 128
    assert [json.loads(line)["seq"] for line in out] == list(range(1, 301))


def test_a_readable_line_per_event_and_the_filters(tmp_path: Path, run: RunDir) -> None:
    done = log(tmp_path, "r")
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert len(out) == 300 and out[0].split()[:5] == [
        "1",
        out[0].split()[1],
        "leg",
        "1",
        "run_started",
    ]
    assert out[-1].split()[0] == "300" and "run_finished" in out[-1] and "outcome=paused" in out[-1]
    assert "node_passed      n140  provenance=exit-only  verdict=PASS" in out[282]

    one = log(tmp_path, "r", "--node", "n140").stdout.splitlines()
    assert [line.split()[0] for line in one] == ["282", "283"]  # in the second chunk
    passed = log(tmp_path, "r", "--event", "node_passed", "--json").stdout.splitlines()
    assert len(passed) == 149 and {json.loads(p)["event"] for p in passed} == {"node_passed"}
    both = log(tmp_path, "r", "--node", "n3", "--node", "n200", "--event", "node_started")
    assert [line.split()[4:6] for line in both.stdout.splitlines()] == [["node_started", "n3"]]


def test_a_damaged_chunk_is_refused_with_exit_3_and_nothing_printed(
    tmp_path: Path, run: RunDir
) -> None:
    chunk = run.segments()[2]
    text = chunk.read_text().splitlines(keepends=True)
    text[9] = text[9][:40] + "\n"  # a garbled line in the last chunk
    chunk.write_text("".join(text))
    for args in (("r",), ("r", "--json"), ("r", "--follow")):
        done = log(tmp_path, *args)
        assert done.returncode == 3 and done.stdout == ""
        assert f"{chunk} line 10 is not a JSON event" in done.stderr


def test_a_lost_chunk_is_refused_too(tmp_path: Path, run: RunDir) -> None:
    run.segments()[1].unlink()
    done = log(tmp_path, "r", "--json")
    assert done.returncode == 3 and done.stdout == ""
    assert "events 129-256 are missing: a chunk of the event log was lost" in done.stderr


def test_what_the_command_line_names_must_exist(tmp_path: Path, run: RunDir) -> None:
    kind = log(tmp_path, "r", "--event", "node_done")
    assert kind.returncode == 2 and "'node_done' is no event kind" in kind.stderr
    assert "node_passed" in kind.stderr
    node = log(tmp_path, "r", "--node", "nope")
    assert node.returncode == 3 and "run 'r' has no node 'nope'" in node.stderr
    missing = log(tmp_path, "other")
    assert missing.returncode == 3 and "no run 'other'" in missing.stderr
    bad = log(tmp_path, "../r")
    assert bad.returncode in (2, 3) and "Traceback" not in bad.stderr


def test_a_readable_line_shows_an_agents_words_inert(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "runs" / "h")
    rd.lock()
    rec = Recorder(rd, empty_state(), leg=1)
    graph: Any = {"name": "g", "nodes": [{"id": "a", "run": "true"}]}
    rec.emit("run_started", graph=graph, graph_source="g.yaml", inputs={})
    rec.emit("node_started", node_id="a")
    said = "\x1b[2J\x1b]0;pwned\x07 evil\u202etxt.exe\nsecond line \x9b31m"
    rec.emit("node_failed", node_id="a", verdict="FAIL", cause="nonzero_exit", detail=said)
    rd.close()
    line = log(tmp_path, "h", "--event", "node_failed").stdout
    assert line.count("\n") == 1 and "\x1b" not in line and "\u202e" not in line
    assert "\x9b" not in line and "\x07" not in line
    assert "\\x1b[2J\\x1b]0;pwned\\x07 evil\\u202etxt.exe\\nsecond line \\x9b31m" in line
    exact = log(tmp_path, "h", "--event", "node_failed", "--json").stdout
    assert json.loads(exact)["detail"] == said  # the record itself, unchanged


def test_follow_prints_what_a_running_leg_appends_until_it_ends(tmp_path: Path) -> None:
    go = tmp_path / "GO"
    nodes = "".join(f"  - {{id: n{i}, depends_on: [hold], run: 'true'}}\n" for i in range(70))
    graph = (
        f"name: g\nconcurrency: 4\nnodes:\n"
        f"  - {{id: hold, run: 'while [ ! -f {go} ]; do sleep 0.05; done'}}\n{nodes}"
    )
    ran: list[Any] = []
    leg = threading.Thread(target=lambda: ran.append(run_graph(tmp_path, graph, run_id="f")))
    leg.start()
    rundir = tmp_path / "runs" / "f"
    _until(lambda: any(e.get("node_id") == "hold" for e in _events(rundir)))

    argv = [sys.executable, "-m", "omg", "log", "f", "--follow", "--json"]
    argv += ["--runs-dir", str(tmp_path / "runs")]
    proc = subprocess.Popen(argv, cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = [proc.stdout.readline(), proc.stdout.readline()]  # what was there: printed
        assert [json.loads(x)["seq"] for x in first] == [1, 2] and proc.poll() is None
        go.touch()  # the leg goes on: 70 nodes, 140 more events, past line 128
        rest, _ = proc.communicate(timeout=60)
    finally:
        go.touch()
        leg.join(timeout=60)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and ran and ran[0].outcome == "passed"
    printed = [*first, *rest.splitlines(keepends=True)]
    rd = RunDir(rundir)
    assert len(rd.segments()) == 2 and [x.rstrip("\n") for x in printed] == recorded(rd)
    assert json.loads(printed[-1])["event"] == "run_finished"


def _events(rundir: Path) -> list[dict[str, Any]]:
    try:
        return read_events(rundir)
    except (FileNotFoundError, ValueError):  # mid-write
        return []


def _until(cond: Any, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)
