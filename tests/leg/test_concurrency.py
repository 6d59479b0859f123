"""Concurrency: independent ready nodes really run in parallel, up to the limit."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from kit import omg_run, write_graph

TWO_SLEEPS = """
    name: sleepers
    concurrency: 2
    nodes:
      - {id: one, run: sleep 0.3}
      - {id: two, run: sleep 0.3}
"""

#: Each node finishes only once the other has started: they pass only if they run side by side
#: (one after the other, the first waits out its timeout and fails) — whatever the machine's speed.
MEETING = """
    name: meeting
    concurrency: 2
    nodes:
      - {id: one, run: 'touch one; while [ ! -f two ]; do sleep 0.01; done', timeout: TIMEOUT}
      - {id: two, run: 'touch two; while [ ! -f one ]; do sleep 0.01; done', timeout: TIMEOUT}
"""


def _span_s(evs: list[dict]) -> float:
    """Seconds from the first node_started to the last node terminal, by the events' clocks."""
    ts = [
        datetime.fromisoformat(e["ts"].replace("Z", "+00:00"))
        for e in evs
        if e["event"] in ("node_started", "node_passed", "node_failed")
    ]
    return (max(ts) - min(ts)).total_seconds()


def _in_flight_peak(evs: list[dict]) -> int:
    live, peak = 0, 0
    for e in evs:
        if e["event"] == "node_started":
            live += 1
            peak = max(peak, live)
        elif e["event"] in ("node_passed", "node_failed"):
            live -= 1
    return peak


def test_two_nodes_run_side_by_side(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(tmp_path, MEETING.replace("TIMEOUT", "60s"))
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    assert _in_flight_peak(r.events()) == 2
    assert [state["nodes"][n]["verdict"] for n in ("one", "two")] == ["PASS", "PASS"]


def test_nodes_that_must_meet_cannot_when_run_one_at_a_time(
    tmp_path: Path, omg, run_dir_check
) -> None:
    """The meeting above can fail: one slot, and the first waits for the second in vain."""
    g = write_graph(tmp_path, MEETING.replace("TIMEOUT", "300ms"))
    r = omg_run(omg, g, "--concurrency", "1")
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    assert state["nodes"]["one"]["cause"] == "timeout"


def test_concurrency_one_serializes(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(tmp_path, TWO_SLEEPS)
    r = omg_run(omg, g, "--concurrency", "1")
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert [e["event"] for e in r.events()][1:5] == [
        "node_started",
        "node_passed",
        "node_started",
        "node_passed",
    ]
    assert _span_s(r.events()) >= 0.6  # two 0.3 s sleeps, one after the other


def test_the_limit_holds_with_more_ready_nodes_than_slots(
    tmp_path: Path, omg, run_dir_check
) -> None:
    nodes = "".join(f"  - {{id: n{i}, run: sleep 0.2}}\n" for i in range(7))
    g = write_graph(tmp_path, "name: wide\nconcurrency: 3\nnodes:\n" + nodes)
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert _in_flight_peak(r.events()) == 3
    r = omg_run(omg, g, "--concurrency", "5", run_id="r2")
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert _in_flight_peak(r.events()) == 5
