"""The fold's handlers, one event at a time: what each event kind does to the state."""

from __future__ import annotations

from typing import Any

import pytest

from omg.state import empty_state, fold
from omg.state.fold import apply, stable_view

START = {"event": "run_started", "seq": 1, "ts": "t1", "run_id": "r", "leg": 1, "graph": {}}


def ev(seq: int, event: str, **fields: Any) -> dict[str, Any]:
    return {"event": event, "seq": seq, "ts": f"t{seq}", "run_id": "r", "leg": 1, **fields}


def folded(*events: dict[str, Any]) -> dict[str, Any]:
    return dict(fold([START, *events]))  # type: ignore[list-item]


# (case, events after run_started, path into the state, expected value)
CASES: list[tuple[str, list[dict[str, Any]], tuple[str, ...], Any]] = [
    (
        "run_started opens a running leg",
        [],
        ("legs",),
        [{"leg": 1, "started": "t1", "finished": None, "outcome": None, "reason": None}],
    ),
    ("run_started takes the run id", [], ("run_id",), "r"),
    (
        "node_passed sets PASS",
        [ev(2, "node_passed", node_id="a", verdict="PASS")],
        ("nodes", "a", "verdict"),
        "PASS",
    ),
    (
        "node_failed sets FAIL",
        [ev(2, "node_failed", node_id="a", verdict="FAIL")],
        ("nodes", "a", "verdict"),
        "FAIL",
    ),
    (
        "a terminal event counts an attempt",
        [ev(2, "node_passed", node_id="a")],
        ("nodes", "a", "attempts"),
        1,
    ),
    (
        "a terminal event adds its cost to the node",
        [
            ev(2, "node_retried", node_id="a", reason="retry", cost_usd=0.25),
            ev(3, "node_passed", node_id="a", cost_usd=0.5),
        ],
        ("nodes", "a", "cost_usd"),
        0.75,
    ),
    (
        "and to the run",
        [
            ev(2, "node_passed", node_id="a", cost_usd=0.5),
            ev(3, "node_passed", node_id="b", cost_usd=0.25),
        ],
        ("cost_usd",),
        0.75,
    ),
    (
        "cost_unknown sticks",
        [
            ev(2, "node_retried", node_id="a", reason="retry", cost_unknown=True),
            ev(3, "node_passed", node_id="a"),
        ],
        ("nodes", "a", "cost_unknown"),
        True,
    ),
    (
        "a retry counts retries",
        [
            ev(2, "node_retried", node_id="a", reason="retry"),
            ev(3, "node_retried", node_id="a", reason="retry"),
        ],
        ("nodes", "a", "retries"),
        2,
    ),
    (
        "a fired arc counts a hop",
        [ev(2, "node_retried", node_id="a", reason="feedback", round=1)],
        ("hops",),
        1,
    ),
    (
        "a fired arc makes the declarer pending in its new round",
        [
            ev(2, "node_passed", node_id="a", provenance="verified"),
            ev(3, "node_retried", node_id="a", reason="feedback", round=1),
        ],
        ("nodes", "a"),
        {
            "verdict": "",
            "round": 1,
            "attempts": 2,
            "cost_usd": 0.0,
            "cost_unknown": False,
            "cause": None,
            "detail": "",
        },
    ),
    (
        "an exhausted loop awaits its gate",
        [ev(2, "node_retried", node_id="a", reason="exhausted", detail="spent")],
        ("nodes", "a", "awaiting"),
        "a.exhausted",
    ),
    ("gate_paused sets paused_at", [ev(2, "gate_paused", node_id="g")], ("paused_at",), "g"),
    (
        "a second gate_paused keeps the first",
        [ev(2, "gate_paused", node_id="g"), ev(3, "gate_paused", node_id="h")],
        ("paused_at",),
        "g",
    ),
    (
        "gate_paused with a declarer marks it awaiting",
        [ev(2, "gate_paused", node_id="a.exhausted", declarer="a")],
        ("nodes", "a", "awaiting"),
        "a.exhausted",
    ),
    (
        "gate_approved records the decision",
        [
            ev(2, "gate_paused", node_id="g"),
            ev(3, "gate_approved", node_id="g", by="ann", reason="ok", state_ref="seq:2"),
        ],
        ("gates", "g"),
        {"decision": "approve", "by": "ann", "reason": "ok", "at": "t3", "state_ref": "seq:2"},
    ),
    (
        "gate_rejected records a reject",
        [ev(2, "gate_rejected", node_id="g", by="bob")],
        ("gates", "g", "decision"),
        "reject",
    ),
    (
        "a decision unpauses its gate",
        [ev(2, "gate_paused", node_id="g"), ev(3, "gate_approved", node_id="g")],
        ("paused_at",),
        None,
    ),
    (
        "a decision on another gate leaves the pause",
        [ev(2, "gate_paused", node_id="g"), ev(3, "gate_approved", node_id="h")],
        ("paused_at",),
        "g",
    ),
    (
        "a decision with hops_reset resets the hops",
        [
            ev(2, "node_retried", node_id="a", reason="feedback", round=1),
            ev(3, "gate_approved", node_id="g", hops_reset=True),
        ],
        ("hops",),
        0,
    ),
    (
        "run_finished closes the leg",
        [ev(2, "run_finished", outcome="failed", reason="halted")],
        ("legs", 0, "outcome"),
        "failed",
    ),
    (
        "run_finished sets the status",
        [ev(2, "run_finished", outcome="succeeded")],
        ("status",),
        "succeeded",
    ),
    (
        "a paused run_finished keeps paused_at",
        [ev(2, "gate_paused", node_id="g"), ev(3, "run_finished", outcome="paused")],
        ("paused_at",),
        "g",
    ),
    (
        "any other run_finished clears it",
        [ev(2, "gate_paused", node_id="g"), ev(3, "run_finished", outcome="failed")],
        ("paused_at",),
        None,
    ),
    (
        "run_superseded supersedes",
        [ev(2, "run_superseded", head_sha="abc")],
        ("superseded_by",),
        "abc",
    ),
    (
        "run_superseded clears the pause",
        [ev(2, "gate_paused", node_id="g"), ev(3, "run_superseded", head_sha="abc")],
        ("paused_at",),
        None,
    ),
    (
        "leg_dispatched lands on the leg's record",
        [ev(2, "leg_dispatched", workflow_run_id=7, url="https://x")],
        ("legs", 0, "dispatched"),
        {"workflow_run_id": 7, "url": "https://x"},
    ),
    (
        "a worktree commit is recorded",
        [
            ev(
                2,
                "node_passed",
                node_id="a",
                worktree="w",
                worktree_branch="b",
                worktree_commit="c0",
            )
        ],
        ("worktrees",),
        {"w": {"branch": "b", "commit": "c0"}},
    ),
    (
        "decision_refused changes no record but the seq",
        [ev(2, "decision_refused", node_id="g")],
        ("nodes",),
        {},
    ),
    ("every folded event moves seq", [ev(2, "decision_refused", node_id="g")], ("seq",), 2),
]


@pytest.mark.parametrize(
    ("events", "path", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_handler(events: list[dict[str, Any]], path: tuple[str, ...], want: Any) -> None:
    got: Any = folded(*events)
    for key in path:
        got = got[key]
    assert got == want


def test_node_started_changes_nothing_not_even_seq() -> None:
    st = folded()
    before = dict(st)
    apply(st, ev(2, "node_started", node_id="a"))  # type: ignore[arg-type]
    assert st == before


def test_a_terminal_event_drops_a_cause_it_does_not_carry() -> None:
    st = folded(
        ev(2, "node_failed", node_id="a", cause="timeout", judged=False),
        ev(3, "node_passed", node_id="a", provenance="verified"),
    )
    assert "cause" not in st["nodes"]["a"] and "judged" not in st["nodes"]["a"]


def test_retry_failed_rearms_what_it_names_and_forgets_their_gates() -> None:
    st = folded(
        ev(2, "node_failed", node_id="a", cause="timeout"),
        ev(3, "node_passed", node_id="b"),
        ev(4, "gate_rejected", node_id="a.exhausted"),
        ev(5, "run_finished", outcome="failed"),
        {
            **ev(6, "run_started", leg=2),
            "retry_failed": True,
            "rearm": ["a", "zz"],
            "forget_gates": ["a.exhausted"],
            "hops_reset": True,
        },
    )
    assert st["nodes"]["a"]["verdict"] == "" and "cause" not in st["nodes"]["a"]
    assert st["nodes"]["b"]["verdict"] == "PASS"
    assert "zz" not in st["nodes"] and st["gates"] == {}
    assert st["status"] == "running" and len(st["legs"]) == 2


def test_a_later_leg_keeps_the_first_legs_graph_and_inputs() -> None:
    first = {**START, "graph": {"name": "g"}, "inputs": {"x": "1"}}
    later = {**ev(3, "run_started", leg=2), "graph": {"name": "other"}, "inputs": {"x": "2"}}
    st = fold([first, ev(2, "run_finished", outcome="paused"), later])  # type: ignore[list-item]
    assert st["graph"] == {"name": "g"} and st["inputs"] == {"x": "1"}


def test_fold_copies_the_state_it_is_given() -> None:
    base = fold([START])  # type: ignore[list-item]
    fold([ev(2, "node_passed", node_id="a")], base)  # type: ignore[list-item]
    assert base["nodes"] == {}


def test_stable_view_drops_time_and_sessions_only() -> None:
    st = folded(
        ev(2, "node_passed", node_id="a", session_id="s", duration_s=1.5, detail="d"),
        ev(3, "gate_approved", node_id="g"),
    )
    view = stable_view(st)  # type: ignore[arg-type]
    assert "session_id" not in view["nodes"]["a"] and "duration_s" not in view["nodes"]["a"]
    assert view["nodes"]["a"]["detail"] == "d"
    assert "started" not in view["legs"][0] and "at" not in view["gates"]["g"]
    assert st["nodes"]["a"]["session_id"] == "s", "the view is a copy"


def test_empty_state_is_a_fresh_dict_each_time() -> None:
    a = empty_state()
    a["nodes"]["x"] = {}  # type: ignore[typeddict-item]
    assert empty_state()["nodes"] == {}
