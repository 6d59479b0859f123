"""The ledger of a long run: past ``LONG_RUN_EVENTS`` events `omg status RUN` and a leg's report
show one row per node and say how to list every execution; ``--executions`` lists them, and a
short run's ledger is one row per execution as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kit import omg_in_process

from omg.cli import exits
from omg.cli.views import LONG_RUN_EVENTS, View, per_node, view
from omg.errors import UsageError
from omg.state import fold
from omg.state.store import CHUNK_EVENTS, RunDir, canonical_json

GRAPH = {"name": "g", "nodes": [{"id": "a", "run": "true"}, {"id": "b", "run": "true"}]}
BASE = {"schema": 1, "ts": "2026-12-01T00:00:00.000Z", "run_id": "r"}


def run_of(tmp_path: Path, executions: int) -> tuple[Path, int]:
    """A paused run whose one leg passed ``executions`` executions of a and b in turn; the
    repository directory it lies in, and its number of events."""
    evs: list[dict[str, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        evs.append({**BASE, "seq": len(evs) + 1, "leg": 1, "event": kind, **fields})

    emit("run_started", graph=GRAPH, graph_source="g.yaml", graph_sha256="", inputs={})
    for i in range(executions):
        nid = "ab"[i % 2]
        emit("node_started", node_id=nid)
        emit("node_passed", node_id=nid, verdict="PASS", provenance="exit-only", cost_usd=0.001)
    emit("run_finished", outcome="paused", reason="leg_budget")
    rd = RunDir(tmp_path / ".omg" / "runs" / "r")
    rd.chunks_path.mkdir(parents=True)
    for i in range(0, len(evs), CHUNK_EVENTS):
        lines = "".join(
            json.dumps(e, sort_keys=True, separators=(",", ":")) + "\n"
            for e in evs[i : i + CHUNK_EVENTS]
        )
        (rd.chunk_path(i + 1) if i else rd.events_path).write_text(lines)
    rd.state_path.write_text(canonical_json(fold(evs)))  # type: ignore[arg-type]
    return tmp_path, len(evs)


@pytest.mark.parametrize(
    ("by_node", "executions", "seq", "rows_per_node"),
    [
        (False, False, 10, False),
        (False, False, LONG_RUN_EVENTS, False),
        (False, False, LONG_RUN_EVENTS + 1, True),
        (True, False, 10, True),
        (False, True, LONG_RUN_EVENTS * 10, False),
        (True, False, LONG_RUN_EVENTS * 10, True),
    ],
)
def test_the_ledgers_rows_follow_the_flags_and_the_runs_length(
    by_node: bool, executions: bool, seq: int, rows_per_node: bool
) -> None:
    asked: View = view(by_node, executions)
    state = fold([])
    state["seq"] = seq
    assert per_node(state, asked) is rows_per_node


def test_both_flags_at_once_are_refused() -> None:
    with pytest.raises(UsageError, match="--by-node and --executions"):
        view(True, True)


def test_a_long_runs_status_shows_one_row_per_node_and_says_how_to_list_each(
    tmp_path: Path,
) -> None:
    repo, events = run_of(tmp_path, LONG_RUN_EVENTS // 2)
    assert events > LONG_RUN_EVENTS
    shown = omg_in_process("status", "r", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    head = shown.stdout.splitlines()[0]
    assert head == (
        f"Run r — 2 node(s), {events:,} events: one row per node "
        "(`omg status r --executions` lists every execution)"
    )
    rows = [ln.split()[0] for ln in shown.stdout.splitlines()[3:5]]
    assert rows == ["a", "b"] and "execution(s)" not in shown.stdout
    every = omg_in_process("status", "r", "--executions", cwd=repo)
    assert every.returncode == 0, every.stderr
    assert f"{LONG_RUN_EVENTS // 2} execution(s)" in every.stdout.splitlines()[0]
    assert len(every.stdout.splitlines()) > LONG_RUN_EVENTS // 2
    for argv in (["status", "r"], ["resume", "r", "--dry-run"], ["run", "g.yaml", "--dry-run"]):
        refused = omg_in_process(*argv, "--by-node", "--executions", cwd=repo)
        assert refused.returncode == 2 and "give one" in refused.stderr, argv


def test_a_short_runs_status_lists_every_execution_as_before(tmp_path: Path) -> None:
    repo, _ = run_of(tmp_path, 6)
    shown = omg_in_process("status", "r", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == "Run r — 2 node(s), 6 execution(s)"


def test_a_leg_of_a_long_run_reports_one_row_per_node_unless_asked_for_each(
    tmp_path: Path,
) -> None:
    repo, _ = run_of(tmp_path, LONG_RUN_EVENTS // 2)
    ended = omg_in_process("resume", "r", "--no-commit", cwd=repo)
    assert ended.returncode == exits.PAUSED, ended.stderr  # every node passed; paused as left
    assert "one row per node (`omg status r --executions`" in ended.stdout
    again = omg_in_process("resume", "r", "--no-commit", "--executions", cwd=repo)
    assert again.returncode == exits.PAUSED, again.stderr
    assert f"{LONG_RUN_EVENTS // 2} execution(s)" in again.stdout


def test_a_fetched_long_runs_hint_names_the_remote_it_came_from(tmp_path: Path) -> None:
    from omg.cli.ledger import render
    from omg.graph.build import graph_from_data

    repo, _ = run_of(tmp_path, LONG_RUN_EVENTS // 2)
    state = fold(RunDir(repo / ".omg" / "runs" / "r").read_events())
    head = render(graph_from_data(state["graph"]), state, (), asked="auto", remote="origin")
    assert "(`omg status r --fetch origin --executions` lists every execution)" in head
