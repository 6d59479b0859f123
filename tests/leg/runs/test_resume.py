"""Resume rebuilds everything from state.json: the snapshotted graph, inputs, records, decisions."""

from __future__ import annotations

from pathlib import Path

from .conftest import Cli
from .helpers import events, launches, log_lines, of_kind, run_path, state, write_graph

GRAPH = """\
name: snap
inputs:
  who: {default: nobody}
nodes:
  - id: hello
    run: echo "hello {{ inputs.who }}" >> log.txt
  - id: gate
    type: gate
    depends_on: [hello]
  - id: bye
    depends_on: [gate]
    run: echo "bye {{ inputs.who }}" >> log.txt
"""


def test_resume_runs_the_snapshot_and_warns_when_the_file_changed(cli: Cli, tmp_path: Path) -> None:
    path = write_graph(tmp_path, GRAPH)
    assert cli("run", "g.yaml", "--run-id", "r", "-i", "who=alice").returncode == 4
    rd = run_path(tmp_path, "r")
    snapshot = state(rd)["graph"]
    path.write_text(
        GRAPH.replace("bye", "CHANGED").replace("nobody", "mallory")
        + "  - id: extra\n    run: echo extra >> log.txt\n"
    )
    res = cli("resume", "r", "--approve", "gate")
    assert res.returncode == 0, res.stderr
    assert "g.yaml has changed since this run started" in res.stderr
    assert "exactly as it was snapshotted" in res.stderr
    # The snapshot ran — the old command, the recorded input — never the edited file.
    assert (tmp_path / "log.txt").read_text() == "hello alice\nbye alice\n"
    st = state(rd)
    assert st["graph"] == snapshot and st["inputs"] == {"who": "alice"}
    assert sorted(st["nodes"]) == ["bye", "gate", "hello"]


def test_resume_needs_no_graph_file_at_all(cli: Cli, tmp_path: Path) -> None:
    path = write_graph(tmp_path, GRAPH)
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    path.unlink()
    res = cli("resume", "r", "--approve", "gate")
    assert res.returncode == 0, res.stderr
    assert "changed" not in res.stderr
    assert (tmp_path / "log.txt").read_text() == "hello nobody\nbye nobody\n"


def test_each_leg_is_one_bracket_with_the_next_leg_number(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        GRAPH.replace(
            "  - id: bye", "  - id: gate2\n    type: gate\n    depends_on: [gate]\n  - id: bye"
        ).replace("depends_on: [gate]\n    run", "depends_on: [gate2]\n    run"),
    )
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    assert cli("resume", "r", "--approve", "gate").returncode == 4
    assert cli("resume", "r", "--approve", "gate2").returncode == 0
    evs = events(run_path(tmp_path, "r"))
    starts = of_kind(evs, "run_started")
    assert [e["leg"] for e in starts] == [1, 2, 3]
    # Only leg 1 carries the graph; later legs rebuild it from state.json.
    assert "graph" in starts[0] and all("graph" not in e for e in starts[1:])
    assert [e["outcome"] for e in of_kind(evs, "run_finished")] == ["paused", "paused", "passed"]
    assert launches(evs) == [("hello", 0), ("bye", 0)]
    assert log_lines(tmp_path) == ["hello", "nobody", "bye", "nobody"]


def test_resume_concurrency_flag_applies_to_the_new_leg(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        """\
name: wide
concurrency: 4
nodes:
  - id: gate
    type: gate
"""
        + "".join(
            f"""\
  - id: w{i}
    depends_on: [gate]
    run: 'echo start{i} >> log.txt; sleep 0.05; echo end{i} >> log.txt'
"""
            for i in range(3)
        ),
    )
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    assert cli("resume", "r", "--approve", "gate", "--concurrency", "1").returncode == 0
    # One at a time: every node ends before the next starts.
    assert log_lines(tmp_path) == ["start0", "end0", "start1", "end1", "start2", "end2"]


def test_resume_of_an_unknown_run_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    res = cli("resume", "nope")
    assert res.returncode == 3
    assert "no run 'nope'" in res.stderr and "Traceback" not in res.stderr
