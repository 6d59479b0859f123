"""Gate decisions (omg.leg.decisions): which are refused, what each records and delivers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omg.errors import StateError
from omg.graph.model import Graph, Node
from omg.leg import decisions
from omg.leg.decisions import Decision
from omg.state import empty_state
from omg.state.recorder import Recorder
from omg.state.store import RunDir


def state(paused: str | None = None, gates: dict[str, str] | None = None) -> Any:
    st: Any = empty_state()
    st["run_id"] = "r1"
    st["paused_at"] = paused
    for gate, decision in (gates or {}).items():
        st["gates"][gate] = {
            "decision": decision,
            "by": "ann",
            "reason": "",
            "at": "t",
            "state_ref": "",
        }
    return st


# (case, state, decision, refused with a message containing)
CHECKS = [
    ("the gate it is paused at is taken", state("g"), Decision("g", True, "bob"), None),
    ("a reject is taken too", state("g"), Decision("g", False, "bob"), None),
    ("no pause: nothing to approve", state(), Decision("g", True, "bob"), "nothing to approve"),
    ("no pause: nothing to reject", state(), Decision("g", False, "bob"), "nothing to reject"),
    (
        "another gate than the pause",
        state("g"),
        Decision("h", True, "bob"),
        "paused at 'g'; resume with --approve g",
    ),
    (
        "a decided gate is never re-asked",
        state("h", {"g": "approve"}),
        Decision("g", False, "x"),
        "already decided (approve by ann)",
    ),
    (
        "a decided gate asking again takes a new decision",
        state("g", {"g": "reject"}),
        Decision("g", True, "bob"),
        None,
    ),
]


@pytest.mark.parametrize(
    ("st", "d", "refused"), [c[1:] for c in CHECKS], ids=[c[0] for c in CHECKS]
)
def test_check(st: Any, d: Decision, refused: str | None) -> None:
    if refused is None:
        decisions.check(st, d)
        return
    with pytest.raises(StateError) as err:
        decisions.check(st, d)
    assert refused in str(err.value)


def test_a_plain_resume_of_a_paused_run_is_refused_with_the_decide_hint() -> None:
    err = decisions.refuse_paused(state("g"))
    assert "paused at gate 'g'" in str(err) and err.hint is not None


GRAPH = Graph(
    name="g",
    nodes=(Node(id="a", kind="agent", prompt="p"), Node(id="g", kind="gate", depends_on=("a",))),
)


@pytest.fixture
def rec(tmp_path: Path) -> Iterator[Recorder]:
    rundir = RunDir(tmp_path / "r1")
    rundir.lock()
    recorder = Recorder(rundir, state(), leg=1)
    recorder.emit("run_started", graph={}, inputs={})
    yield recorder
    rundir.close()


# (case, decision, the last event's kind, its fields that must hold)
RECORDS = [
    (
        "approve passes the gate",
        Decision("g", True, "ann", "lgtm"),
        "node_passed",
        {
            "node_id": "g",
            "verdict": "PASS",
            "provenance": "approved",
            "detail": "gate approved by ann: lgtm",
        },
    ),
    (
        "reject fails it, unjudged",
        Decision("g", False, "bob"),
        "node_failed",
        {"node_id": "g", "verdict": "FAIL", "judged": False, "detail": "gate rejected by bob"},
    ),
]


@pytest.mark.parametrize(
    ("d", "kind", "fields"), [c[1:] for c in RECORDS], ids=[c[0] for c in RECORDS]
)
def test_record_then_deliver(rec: Recorder, d: Decision, kind: str, fields: dict) -> None:
    decisions.record(rec, GRAPH, d, "seq:1")
    evs = [line for line in rec.rundir.events_path.read_text().splitlines()]
    import json

    decided, verdict = json.loads(evs[-2]), json.loads(evs[-1])
    assert decided["event"] == ("gate_approved" if d.approve else "gate_rejected")
    assert (decided["by"], decided["state_ref"], decided["hops_reset"]) == (d.by, "seq:1", True)
    assert verdict["event"] == kind
    assert {k: verdict.get(k) for k in fields} == fields
    assert rec.state["gates"]["g"]["decision"] == ("approve" if d.approve else "reject")


def test_approving_an_exhausted_loop_makes_its_last_reply_the_artifact(rec: Recorder) -> None:
    rd = rec.rundir
    rec.emit("node_retried", node_id="a", reason="feedback", round=2)
    rec.emit("node_retried", node_id="a", reason="exhausted", detail="spent")
    rd.write_payload(rd.failed("a"), "the last reply")
    decisions.deliver(rec, GRAPH, Decision("a.exhausted", True, "ann"))
    assert rd.artifact("a").read_text() == "the last reply" and not rd.failed("a").exists()
    assert rec.state["nodes"]["a"]["verdict"] == "PASS"
    assert rec.state["nodes"]["a"]["round"] == 2, "the verdict lands on the loop's round"


def test_rejecting_an_exhausted_loop_fails_its_declarer(rec: Recorder) -> None:
    rec.emit("node_retried", node_id="a", reason="exhausted", detail="spent")
    decisions.deliver(rec, GRAPH, Decision("a.exhausted", False, "bob", "no"))
    assert rec.state["nodes"]["a"]["verdict"] == "FAIL"
    assert not rec.rundir.artifact("a").exists()


# (case, state's gates and nodes, the decisions undelivered)
def with_records(gates: dict[str, str], nodes: dict[str, dict]) -> Any:
    st = state(None, gates)
    st["nodes"] = nodes
    return st


UNDELIVERED = [
    ("nothing decided", with_records({}, {}), []),
    (
        "a decision whose verdict landed",
        with_records({"g": "approve"}, {"g": {"verdict": "PASS"}}),
        [],
    ),
    (
        "a decision killed before its verdict",
        with_records({"g": "reject"}, {}),
        [Decision("g", False, "ann", "")],
    ),
    (
        "an exhausted loop still waiting",
        with_records({"a.exhausted": "approve"}, {"a": {"verdict": "", "awaiting": "a.exhausted"}}),
        [Decision("a.exhausted", True, "ann", "")],
    ),
    (
        "an exhausted loop delivered",
        with_records({"a.exhausted": "approve"}, {"a": {"verdict": "PASS"}}),
        [],
    ),
]


@pytest.mark.parametrize(
    ("st", "want"), [c[1:] for c in UNDELIVERED], ids=[c[0] for c in UNDELIVERED]
)
def test_undelivered(st: Any, want: list[Decision]) -> None:
    assert decisions.undelivered(GRAPH, st) == want
