"""Determinism: same graph + same node outcomes ⇒ same launches, same order, same state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import Cli
from .helpers import events, launches, run_path, state, write_graph

# Outcomes depend only on files each run writes in its own directory: a retry that passes on
# its second attempt, a review that passes on its second execution (one feedback round), a gate.
GRAPH = """\
name: det
concurrency: {concurrency}
nodes:
  - id: setup
    run: echo setup
  - id: left
    depends_on: [setup]
    run: echo left
  - id: flaky
    depends_on: [setup]
    run: 'if [ -f tried ]; then echo ok; else touch tried; echo first; exit 1; fi'
    retry: {{max: 1, on: [nonzero_exit]}}
  - id: impl
    depends_on: [left]
    run: echo impl >> impl.log
  - id: review
    depends_on: [impl]
    run: '[ "$(grep -c impl impl.log)" -ge 2 ]'
    feedback: {{rerun: impl, max: 2}}
  - id: approve
    type: gate
    depends_on: [review, flaky]
  - id: ship
    depends_on: [approve]
    run: echo ship
"""

VOLATILE_EVENT_FIELDS = ("ts", "duration_s", "session_id")


def stable_events(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in VOLATILE_EVENT_FIELDS} for e in evs]


def run_to_end(cli: Cli, root: Path, *extra: str) -> Path:
    assert cli("run", "g.yaml", "--run-id", "r", *extra, cwd=root).returncode == 4
    res = cli("resume", "r", "--approve", "approve", "--by", "det", cwd=root)
    assert res.returncode == 0, res.stderr
    return run_path(root, "r")


def two_runs(cli: Cli, tmp_path: Path, concurrency: int) -> tuple[Path, Path]:
    dirs = []
    for name in ("one", "two"):
        root = tmp_path / name
        write_graph(root, GRAPH.format(concurrency=concurrency))
        dirs.append(run_to_end(cli, root))
    return dirs[0], dirs[1]


def test_same_outcomes_same_launches_same_events_same_state(cli: Cli, tmp_path: Path) -> None:
    from omg.state import stable_view

    one, two = two_runs(cli, tmp_path, concurrency=1)
    assert (
        launches(events(one))
        == launches(events(two))
        == [
            ("setup", 0),
            ("left", 0),
            ("flaky", 0),
            ("impl", 0),
            ("review", 0),
            ("impl", 1),
            ("review", 1),
            ("ship", 0),
        ]
    )
    # Every event, field for field, apart from when it happened and how long it took.
    assert stable_events(events(one)) == stable_events(events(two))
    assert stable_view(state(one)) == stable_view(state(two))
    st = state(one)
    assert st["nodes"]["flaky"]["attempts"] == 2 and st["nodes"]["review"]["round"] == 1


def test_parallel_runs_reach_the_same_state(cli: Cli, tmp_path: Path) -> None:
    from omg.state import stable_view

    one, two = two_runs(cli, tmp_path, concurrency=3)
    assert stable_view(state(one)) == stable_view(state(two))
    # Launch order may interleave differently, but each node launches the same times per round.
    assert sorted(launches(events(one))) == sorted(launches(events(two)))


def test_one_leg_or_many_the_same_launches_and_records(cli: Cli, tmp_path: Path) -> None:
    from omg.state import stable_view

    whole = tmp_path / "whole"
    write_graph(whole, GRAPH.format(concurrency=1))
    one = run_to_end(cli, whole)

    sliced = tmp_path / "sliced"
    write_graph(sliced, GRAPH.format(concurrency=1))
    rd = run_path(sliced, "r")
    assert cli("run", "g.yaml", "--run-id", "r", "--max-nodes", "2", cwd=sliced).returncode == 4
    while state(rd)["paused_at"] is None:
        assert cli("resume", "r", "--max-nodes", "2", cwd=sliced).returncode == 4
    assert cli("resume", "r", "--approve", "approve", "--by", "det", cwd=sliced).returncode == 0
    assert launches(events(rd)) == launches(events(one))
    a, b = stable_view(state(one)), stable_view(state(rd))
    assert a["nodes"] == b["nodes"]
    for gate in (a["gates"]["approve"], b["gates"]["approve"]):  # seq:N counts the legs' events
        gate.pop("state_ref")
    assert a["gates"] == b["gates"]
    assert (a["cost_usd"], a["hops"], a["status"]) == (b["cost_usd"], b["hops"], b["status"])
    assert len(b["legs"]) > len(a["legs"])


def test_state_json_and_events_are_canonical(cli: Cli, tmp_path: Path) -> None:
    from omg.state.store import canonical_json

    write_graph(tmp_path, GRAPH.format(concurrency=2))
    rd = run_to_end(cli, tmp_path)
    text = (rd / "state.json").read_text(encoding="utf-8")
    assert text == canonical_json(json.loads(text))
    assert text.endswith("\n") and "\r" not in text
    # Sorted keys at every level: re-encoding sorted changes nothing semantically or in order.
    top = list(json.loads(text))
    assert top == sorted(top)
    for line in (rd / "events.jsonl").read_text().splitlines():
        ev = json.loads(line)
        assert line == json.dumps(ev, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
