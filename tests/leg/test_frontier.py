"""The engine's incremental frontier always equals a full recomputation of statuses and ready."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from omg import schedule
from omg.graph.build import graph_from_data
from omg.graph.model import Graph
from omg.state import apply, empty_state


@st.composite
def graphs(draw: st.DrawFn) -> Graph:
    n = draw(st.integers(2, 9))
    ids = [f"n{i}" for i in range(n)]
    nodes: list[dict[str, Any]] = []
    for i, nid in enumerate(ids):
        parents = draw(st.lists(st.sampled_from(ids[:i]), unique=True, max_size=3)) if i else []
        nodes.append({"id": nid, "run": "true", "depends_on": parents})
    data: dict[str, Any] = {"name": "g", "nodes": nodes}
    graph = graph_from_data(data)
    declarers = [nid for nid in ids if graph.ancestors(nid)]
    for declarer in draw(
        st.lists(st.sampled_from(declarers), unique=True, max_size=2) if declarers else st.just([])
    ):
        target = draw(st.sampled_from(sorted(graph.ancestors(declarer))))
        next(n for n in nodes if n["id"] == declarer)["feedback"] = {"rerun": target, "max": 3}
    return graph_from_data(data)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Graph, list[dict[str, Any]]]:
    graph = draw(graphs())
    ids = list(graph.ids)
    events: list[dict[str, Any]] = [{"event": "run_started", "leg": 1, "ts": "t", "run_id": "r"}]
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["pass", "fail", "fire", "await", "start", "retry_failed"]))
        nid = draw(st.sampled_from(ids))
        rnd = draw(st.integers(0, 3))
        if kind == "pass":
            ev = {
                "event": "node_passed",
                "node_id": nid,
                "verdict": "PASS",
                "round": rnd,
                "provenance": "exit-only",
            }
        elif kind == "fail":
            ev = {"event": "node_failed", "node_id": nid, "verdict": "FAIL", "round": rnd}
        elif kind == "fire":
            ev = {
                "event": "node_retried",
                "node_id": nid,
                "reason": "feedback",
                "cause": "nonzero_exit",
                "round": rnd + 1,
            }
        elif kind == "await":
            ev = {"event": "gate_paused", "node_id": nid + ".exhausted", "declarer": nid}
        elif kind == "start":
            ev = {"event": "node_started", "node_id": nid}
        else:
            ev = {"event": "run_started", "leg": 2, "ts": "t", "retry_failed": True}
        events.append(ev)
    return graph, events


@settings(max_examples=300, deadline=None)
@given(scenarios(), st.sets(st.sampled_from([f"n{i}" for i in range(9)]), max_size=3))
def test_the_frontier_tracks_every_event(
    scenario: tuple[Graph, list[dict[str, Any]]], running: set[str]
) -> None:
    graph, events = scenario
    state = empty_state()
    state["graph"] = dict(graph.data)
    frontier = None
    for seq, ev in enumerate(events, 1):
        apply(state, {**ev, "seq": seq})
        if frontier is None:
            frontier = schedule.Frontier(graph, state["nodes"])
        else:
            frontier.update(state["nodes"], schedule.affected_by(graph, ev))
        full = schedule.statuses(graph, state["nodes"])
        assert frontier.status == full
        want = schedule.ready(graph, full, running)
        assert frontier.ready(running) == want
        assert frontier.first(running) == (want[0] if want else None)  # the heap's answer
        for status in ("passed", "failed", "pending", "awaiting"):
            assert frontier.having(status) == {n for n, s in full.items() if s == status}
