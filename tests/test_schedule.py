"""The pure decisions in omg.schedule: outcome rule, --retry-failed re-arm set, retry/defer."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from omg import schedule
from omg.graph.build import graph_from_data
from omg.graph.model import Graph
from omg.records import NodeRecord
from omg.state import fold

LOOP = {
    "name": "g",
    "nodes": [
        {"id": "a", "run": "true"},
        {"id": "impl", "run": "true", "depends_on": ["a"]},
        {"id": "check", "run": "true", "depends_on": ["impl"]},
        {
            "id": "review",
            "run": "true",
            "depends_on": ["check"],
            "feedback": {"rerun": "impl", "max": 2, "on_exhausted": "gate"},
        },
        {"id": "docs", "run": "true", "depends_on": ["a"]},
    ],
}


def rec(verdict: str = "", round_: int = 0, **extra: Any) -> NodeRecord:
    out: dict[str, Any] = {
        "verdict": verdict,
        "round": round_,
        "attempts": 1,
        "cost_usd": 0.5,
        "cost_unknown": False,
        **extra,
    }
    return out  # type: ignore[return-value]


def graph(data: dict[str, Any] = LOOP, **top: Any) -> Graph:
    return graph_from_data({**data, **top})


# -- the outcome rule -------------------------------------------------------------------


def test_a_gate_stop_pauses_the_leg_at_that_gate() -> None:
    g = graph()
    status = schedule.statuses(g, {"a": rec("PASS")})
    assert schedule.ending(g, status, "gate", "x") == schedule.LegResult("paused", "gate", "x")


def test_a_failure_under_halt_fails_the_leg_even_with_work_left() -> None:
    g = graph()
    status = schedule.statuses(g, {"a": rec("PASS"), "docs": rec("FAIL")})
    res = schedule.ending(g, status, "halt", None)
    assert (res.outcome, res.reason, res.detail) == ("failed", "failed", "failed: docs")
    assert schedule.failed_for_good(g, status) == ["docs"]


def test_a_failure_under_continue_waits_until_nothing_else_can_run() -> None:
    g = graph(on_fail="continue")
    status = schedule.statuses(g, {"a": rec("PASS"), "docs": rec("FAIL")})
    assert schedule.failed_for_good(g, status) == []
    assert schedule.ending(g, status, None, None).outcome == "paused"
    done = {n: rec("PASS") for n in ("a", "impl", "check", "review")}
    status = schedule.statuses(g, {**done, "docs": rec("FAIL")})
    assert schedule.ending(g, status, None, None).outcome == "failed"


def test_work_left_after_a_budget_stop_is_a_leg_budget_pause() -> None:
    g = graph()
    status = schedule.statuses(g, {"a": rec("PASS")})
    assert schedule.ending(g, status, "leg_budget", None).reason == "leg_budget"
    assert schedule.ending(g, status, None, None).reason == "unfinished"


def test_everything_passed_is_a_passed_leg() -> None:
    g = graph()
    status = schedule.statuses(g, {n: rec("PASS") for n in g.ids})
    assert schedule.ending(g, status, None, None) == schedule.LegResult("passed")


# -- the --retry-failed re-arm set ------------------------------------------------------


def test_rearm_clears_failed_records_but_not_rejected_gates() -> None:
    data = {**LOOP, "nodes": [*LOOP["nodes"], {"id": "ok", "type": "gate", "depends_on": ["a"]}]}
    g = graph(data)
    records = {"a": rec("PASS"), "docs": rec("FAIL"), "ok": rec("FAIL")}
    gates = {"ok": {"decision": "reject"}}
    assert schedule.rearm(g, records, gates) == schedule.Rearm(("docs",), ())


def test_rearm_takes_an_exhausted_loops_whole_body_and_forgets_its_gate() -> None:
    g = graph()
    records = {
        "a": rec("PASS"),
        "impl": rec("PASS", 2),
        "check": rec("PASS", 2),
        "review": rec("", 2, awaiting="review.exhausted"),
    }
    out = schedule.rearm(g, records, {})
    assert out.nodes == ("impl", "check", "review")
    assert out.gates == ("review.exhausted",)


def test_a_plain_failure_of_a_declarer_that_never_looped_rearms_only_itself() -> None:
    g = graph()
    records = {"a": rec("PASS"), "impl": rec("PASS"), "check": rec("PASS"), "review": rec("FAIL")}
    assert schedule.rearm(g, records, {}) == schedule.Rearm(("review",), ())


# -- retry or defer ---------------------------------------------------------------------

RETRYING = {
    "name": "g",
    "nodes": [
        {
            "id": "n",
            "run": "false",
            "timeout": "10s",
            "retry": {"max": 2, "on": ["nonzero_exit"], "backoff": {"initial": "1s", "factor": 2}},
        }
    ],
}


def test_a_pass_or_a_cause_not_listed_is_final() -> None:
    node = graph(RETRYING).node("n")
    assert schedule.next_attempt(node, 1, True, None, None) == ("final", 0.0)
    assert schedule.next_attempt(node, 1, False, "timeout", None) == ("final", 0.0)


def test_a_listed_cause_retries_with_backoff_until_the_attempts_run_out() -> None:
    node = graph(RETRYING).node("n")
    assert schedule.next_attempt(node, 1, False, "nonzero_exit", None) == ("retry", 1.0)
    assert schedule.next_attempt(node, 2, False, "nonzero_exit", None) == ("retry", 2.0)
    assert schedule.next_attempt(node, 3, False, "nonzero_exit", None)[0] == "final"


def test_a_retry_the_leg_cannot_hold_is_deferred() -> None:
    node = graph(RETRYING).node("n")
    assert schedule.next_attempt(node, 1, False, "nonzero_exit", 10.5)[0] == "defer"
    assert schedule.next_attempt(node, 1, False, "nonzero_exit", 11.0)[0] == "retry"


# -- old event files: a retry_failed without rearm folds as it always did ---------------


def _events(records: dict[str, NodeRecord], g: Graph) -> list[dict[str, Any]]:
    """A synthetic stream that leaves ``records`` behind, then a --retry-failed leg."""
    evs: list[dict[str, Any]] = [
        {"event": "run_started", "seq": 1, "leg": 1, "ts": "t", "run_id": "r", "graph": g.data}
    ]
    for nid, r in records.items():
        seq = len(evs) + 1
        if r.get("awaiting"):
            evs.append(
                {"event": "node_retried", "seq": seq, "leg": 1, "ts": "t", "run_id": "r"}
                | {"node_id": nid, "reason": "feedback", "round": r["round"]}
            )
            evs.append(
                {"event": "gate_paused", "seq": seq + 1, "leg": 1, "ts": "t", "run_id": "r"}
                | {"node_id": r["awaiting"], "declarer": nid}
            )
            continue
        kind = {"PASS": "node_passed", "FAIL": "node_failed"}[r["verdict"]]
        evs.append(
            {"event": kind, "seq": seq, "leg": 1, "ts": "t", "run_id": "r", "node_id": nid}
            | {"verdict": r["verdict"], "round": r["round"]}
        )
    evs.append({"event": "run_finished", "seq": len(evs) + 1, "leg": 1, "ts": "t"} | {
        "run_id": "r", "outcome": "failed"})  # fmt: skip
    return evs


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_legacy_retry_failed_event_folds_like_one_that_names_its_rearm_set(
    data: st.DataObject,
) -> None:
    g = graph()
    verdicts = st.sampled_from(["PASS", "FAIL"])
    records: dict[str, NodeRecord] = {"a": rec("PASS")}
    rnd = data.draw(st.integers(0, 2))
    for nid in ("impl", "check"):
        records[nid] = rec(data.draw(verdicts), rnd)
    if data.draw(st.booleans()):
        records["review"] = rec("", 2, awaiting="review.exhausted")
    else:
        records["review"] = rec(data.draw(verdicts), rnd)
    records["docs"] = rec(data.draw(verdicts))
    before = fold(_events(records, g))
    rearm = schedule.rearm(g, before["nodes"], before["gates"])
    start = {"event": "run_started", "seq": 99, "leg": 2, "ts": "t", "run_id": "r"}
    legacy = fold([{**start, "retry_failed": True}], before)
    named = fold(
        [
            {
                **start,
                "retry_failed": True,
                "rearm": list(rearm.nodes),
                "forget_gates": list(rearm.gates),
            }
        ],
        before,
    )
    assert legacy == named
    assert all(legacy["nodes"][n]["verdict"] == "" for n in rearm.nodes)
