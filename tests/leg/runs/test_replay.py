"""`omg replay`: rebuild state.json from events.jsonl and compare, field by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Cli
from .helpers import run_path, write_graph

GRAPH = """\
name: replayed
nodes:
  - id: gate
    type: gate
  - id: a
    depends_on: [gate]
    run: echo a
  - id: b
    depends_on: [a]
    run: 'test -f ok'
    feedback: {rerun: a, max: 1}
"""


def multi_leg_run(cli: Cli, tmp_path: Path) -> Path:
    write_graph(tmp_path, GRAPH)
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    assert cli("resume", "r", "--approve", "gate", "--by", "eve").returncode == 1
    (tmp_path / "ok").touch()
    assert cli("resume", "r", "--retry-failed").returncode == 0
    return run_path(tmp_path, "r")


def tamper(rd: Path, fn: object) -> None:
    from omg.state.store import canonical_json

    st = json.loads((rd / "state.json").read_text())
    fn(st)  # type: ignore[operator]
    (rd / "state.json").write_text(canonical_json(st))


def test_replay_equal_after_many_legs(cli: Cli, tmp_path: Path) -> None:
    multi_leg_run(cli, tmp_path)
    res = cli("replay", "r")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "equals the fold of the events" in res.stdout


def test_replay_names_each_field_that_differs(cli: Cli, tmp_path: Path) -> None:
    rd = multi_leg_run(cli, tmp_path)
    events_before = (rd / "events.jsonl").read_bytes()

    def edit(st: dict) -> None:
        st["nodes"]["a"]["verdict"] = "FAIL"
        st["gates"]["gate"]["by"] = "mallory"
        st["cost_usd"] = 12.5
        del st["nodes"]["b"]["provenance"]

    tamper(rd, edit)
    res = cli("replay", "r")
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    assert lines[0] == "run 'r': state.json differs from the fold of the events:"
    diffs = {ln.strip().split(":")[0] for ln in lines[1:]}
    assert diffs == {"nodes.a.verdict", "gates.gate.by", "cost_usd", "nodes.b.provenance"}
    assert "  nodes.a.verdict: state.json has 'FAIL', replay has 'PASS'" in lines
    assert "  gates.gate.by: state.json has 'mallory', replay has 'eve'" in lines
    assert "  nodes.b.provenance: missing in state.json, replay has 'exit-only'" in lines
    # Comparing wrote nothing; --write rebuilds the snapshot from the stream.
    assert (rd / "events.jsonl").read_bytes() == events_before
    assert cli("replay", "r", "--write").returncode == 0
    assert cli("replay", "r").returncode == 0
    assert (rd / "events.jsonl").read_bytes() == events_before


def test_replay_of_a_missing_run(cli: Cli, tmp_path: Path) -> None:
    res = cli("replay", "ghost")
    assert res.returncode == 3 and "Traceback" not in res.stderr


@pytest.mark.damaged
def test_replay_accepts_a_checkpoint_the_log_has_moved_past_and_names_the_tail(
    cli: Cli, tmp_path: Path
) -> None:
    from omg.state import fold
    from omg.state.store import RunDir, canonical_json

    rd = multi_leg_run(cli, tmp_path)
    evs = list(RunDir(rd).read_events())
    behind = max(e["seq"] for e in evs if e["event"] == "node_passed") - 1
    (rd / "state.json").write_text(canonical_json(fold(e for e in evs if e["seq"] <= behind)))
    res = cli("replay", "r")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "event(s) past it, since its last checkpoint" in res.stdout

    tamper(rd, lambda st: st.update(cost_usd=9.0))  # a checkpoint that is not the fold: refused
    res = cli("replay", "r")
    assert res.returncode != 0
    assert "cost_usd" in res.stdout + res.stderr
