"""One run's facts from its state and events, as tables of event sequences: how its loops
ended after how many rounds, how long a person took at each gate, which attempts failed and
why, how the run stands, and which graph version it ran."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from omg.records import State
from omg.state import Event, fold
from omg.stats.facts import Loop, Malformed, facts, outcome_of, parse_ts, version_of

from .synth import graph_data

GRAPH = graph_data(0)  # impl → review (feedback: rerun impl, max 2, gate) → merge (a gate)
T0 = datetime(2026, 12, 1, tzinfo=UTC)


def log(*steps: tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], float]) -> list[Event]:
    """Events in order, one second apart unless a step says how many seconds it came after."""
    out: list[dict[str, Any]] = []
    leg, at = 0, T0
    for step in steps:
        kind, fields = step[0], step[1]
        at += timedelta(seconds=step[2] if len(step) > 2 else 1)  # type: ignore[misc]
        if kind == "run_started":
            leg += 1
            if leg == 1:
                fields = {"graph": GRAPH, "graph_source": "g.yaml", "graph_sha256": "a" * 64,
                          "inputs": {}, **fields}  # fmt: skip
        ts = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        out.append({"schema": 1, "seq": len(out) + 1, "ts": ts, "run_id": "r", "leg": leg,
                    "event": kind, **fields})  # fmt: skip
    return cast(list[Event], out)


def start(**kw: Any) -> tuple[str, dict[str, Any]]:
    return ("run_started", kw)


def ran(node: str, rnd: int = 0, **kw: Any) -> list[tuple[str, dict[str, Any]]]:
    return [("node_started", {"node_id": node, "round": rnd}),
            ("node_passed", {"node_id": node, "verdict": "PASS", "provenance": "verified",
                             "round": rnd, **kw})]  # fmt: skip


def fired(rnd: int) -> tuple[str, dict[str, Any]]:
    """review's arc fires: round ``rnd`` begins."""
    return ("node_retried", {"node_id": "review", "reason": "feedback", "cause": "result_mismatch",
                             "round": rnd})  # fmt: skip


def review(rnd: int) -> tuple[str, dict[str, Any]]:
    return ("node_started", {"node_id": "review", "round": rnd})


def judged(ev: list[Event]) -> tuple[State, list[Event]]:
    return fold(ev), ev


def exhausted(rnd: int, cause: str = "result_mismatch") -> tuple[str, dict[str, Any]]:
    """review's loop escalates: its rounds ran out (or the last changed nothing)."""
    return ("node_retried", {"node_id": "review", "reason": "exhausted", "cause": cause,
                             "round": rnd})  # fmt: skip


def failed(cause: str, **kw: Any) -> tuple[str, dict[str, Any]]:
    return ("node_failed", {"node_id": "review", "verdict": "FAIL", "cause": cause, **kw})


ROUND = [*ran("impl"), review(0), fired(1), *ran("impl", 1), review(1)]
#: Both rounds spent: review escalates to its gate.
SPENT = [
    *ROUND, fired(2), *ran("impl", 2), review(2), exhausted(2),
    ("gate_paused", {"node_id": "review.exhausted", "declarer": "review"}),
]  # fmt: skip
PASSED_1 = ("node_passed", {"node_id": "review", "verdict": "PASS", "provenance": "verified",
                            "round": 1})  # fmt: skip
APPROVED = [
    start(), ("gate_approved", {"node_id": "review.exhausted", "by": "mona", "state_ref": "s"}),
    ("node_passed", {"node_id": "review", "verdict": "PASS", "provenance": "approved"}),
]  # fmt: skip
BOUGHT = [
    start(retry_failed=True, rearm=["impl", "review"], forget_gates=["review.exhausted"]),
    *ran("impl"), review(0), fired(1), *ran("impl", 1), *ran("review", 1),
]  # fmt: skip
LOOPS: dict[str, tuple[list[Event], list[Loop]]] = {
    "converged at once": (
        log(start(), *ran("impl"), *ran("review")), [Loop("review", 0, "converged")]),
    "converged after a round": (log(start(), *ROUND, PASSED_1), [Loop("review", 1, "converged")]),
    "a round that changed nothing, escalated": (
        log(start(), *ROUND, exhausted(1, "no_progress")), [Loop("review", 1, "no_progress")]),
    "a round that changed nothing, failed": (
        log(start(), *ROUND, failed("no_progress", judged=True)),
        [Loop("review", 1, "no_progress")]),
    "rounds spent, escalated to its gate": (log(start(), *SPENT), [Loop("review", 2, "exhausted")]),
    "rounds spent, failed": (
        log(start(), *ROUND, failed("result_mismatch", judged=True)),
        [Loop("review", 1, "exhausted")]),
    "a reviewer that timed out": (
        log(start(), *ran("impl"), review(0), failed("timeout")), [Loop("review", 0, "broken")]),
    "an exhausted loop approved ends once": (
        log(start(), *SPENT, *APPROVED), [Loop("review", 2, "exhausted")]),
    "rounds a person bought after exhaustion": (
        log(start(), *SPENT, *BOUGHT),
        [Loop("review", 2, "exhausted"), Loop("review", 1, "converged")]),
    "no loop reached": (log(start(), ("node_started", {"node_id": "impl"})), []),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(LOOPS))
def test_a_loop_ends_after_its_rounds_in_one_of_four_ways(case: str) -> None:
    events, want = LOOPS[case]
    assert list(facts(*judged(events)).loops) == want


def test_a_gate_wait_is_a_persons_time_from_the_pause_to_the_decision() -> None:
    events = log(
        start(), *ran("impl"), *ran("review"), ("gate_paused", {"node_id": "merge"}),
        ("run_finished", {"outcome": "paused", "reason": "gate", "paused_at": "merge"}),
        start(), ("gate_rejected", {"node_id": "merge", "by": "mona", "state_ref": "seq:9",
                                    "reason": "no"}, 5400),
        ("run_finished", {"outcome": "failed"}),
    )  # fmt: skip
    [wait] = facts(*judged(events)).gates
    assert (wait.gate, wait.seconds, wait.decision) == ("merge", 5402.0, "reject")


def test_a_gate_waiting_now_counts_as_undecided_and_a_forgotten_one_not_at_all() -> None:
    events = log(
        start(), *ROUND, exhausted(1), ("gate_paused", {"node_id": "review.exhausted",
                                                     "declarer": "review"}),
        start(retry_failed=True, rearm=["impl", "review"], forget_gates=["review.exhausted"]),
        *ran("impl"), *ran("review"), ("gate_paused", {"node_id": "merge"}),
        ("run_finished", {"outcome": "paused", "reason": "gate", "paused_at": "merge"}),
    )  # fmt: skip
    found = facts(*judged(events))
    assert [(g.gate, g.seconds) for g in found.gates] == [("merge", None)]
    assert found.outcome == "paused"


def test_failed_attempts_count_by_node_and_cause_retries_and_limits_aside() -> None:
    events = log(
        start(), ("node_started", {"node_id": "impl"}),
        ("node_retried", {"node_id": "impl", "reason": "retry", "cause": "timeout",
                          "api_retries": 3}),
        ("node_retried", {"node_id": "impl", "reason": "limit", "cause": "run_error",
                          "limit": "session"}),
        ("run_finished", {"outcome": "paused", "reason": "limit"}),
        start(), ("node_started", {"node_id": "impl"}),
        ("node_retried", {"node_id": "impl", "reason": "leg_budget", "cause": "timeout"}),
        ("run_finished", {"outcome": "paused", "reason": "leg_budget"}),
        start(), ("node_started", {"node_id": "impl"}),
        ("node_failed", {"node_id": "impl", "verdict": "FAIL", "api_retries": 2}),
        ("run_finished", {"outcome": "failed"}),
    )  # fmt: skip
    found = facts(*judged(events))
    assert found.failures == (("impl", "timeout"), ("impl", "failed"))
    assert (found.api_retries, found.limit_pauses, found.executions) == (5, 1, 3)
    assert found.outcome == "failed" and found.attempts == 4
    negative = ("node_failed", {"node_id": "impl", "verdict": "FAIL", "api_retries": -9})
    odd = log(start(), ("node_started", {"node_id": "impl"}), negative)
    assert facts(*judged(odd)).api_retries == 0  # a count below zero counts nothing


def state(**kw: Any) -> State:
    base = {"status": "running", "paused_at": None, "legs": [{"outcome": "passed"}]}
    return cast(State, {**base, **kw})


@pytest.mark.parametrize(
    ("kw", "want"),
    [
        ({"status": "passed"}, "passed"),
        ({"status": "failed"}, "failed"),
        ({"status": "paused", "paused_at": "merge"}, "paused"),
        ({"status": "paused"}, "waiting"),  # its next leg, a provider's limit, a spend cap
        ({"status": "superseded", "legs": [{"outcome": None}]}, "superseded"),
        ({"status": "running", "legs": [{"outcome": None}]}, "running"),
        ({"status": "paused", "paused_at": "merge", "legs": [{"outcome": None}]}, "running"),
    ],
)
def test_a_run_stands_as_its_record_says(kw: dict[str, Any], want: str) -> None:
    assert outcome_of(state(**kw)) == want


def snapshot(sha: str, spliced: dict[str, str] | None = None, name: str = "g") -> State:
    graph: dict[str, Any] = {"name": name, "nodes": []}
    if spliced is not None:
        graph["resolved_from"] = spliced
    return cast(State, {"graph": graph, "graph_sha256": sha})


def test_a_version_is_the_graph_files_hash_and_every_fragments() -> None:
    one = version_of(snapshot("a" * 64, {"graphs/fragments/f.yaml": "1" * 64}))
    same = version_of(snapshot("a" * 64, {"graphs/fragments/f.yaml": "1" * 64}))
    prompt = version_of(snapshot("a" * 64, {"graphs/fragments/f.yaml": "2" * 64}))
    file = version_of(snapshot("b" * 64, {"graphs/fragments/f.yaml": "1" * 64}))
    assert one.key == same.key and len({one.key, prompt.key, file.key}) == 3
    assert len(one.key) == 12 and one.fragments == (("graphs/fragments/f.yaml", "1" * 64),)
    unhashed = version_of(snapshot(""))  # a graph not read from a file: its snapshot's hash
    assert unhashed.graph_sha256.startswith("snapshot:")


@pytest.mark.parametrize(
    "bad",
    [snapshot("a" * 64, {"f": 3}), snapshot(7), snapshot("a", name=None), snapshot("a", "x")],  # type: ignore[arg-type,dict-item]
)
def test_a_version_omg_could_not_have_written_is_malformed(bad: State) -> None:
    with pytest.raises(Malformed):
        version_of(bad)


@pytest.mark.parametrize("ts", ["2026-12-01", "yesterday", 5, None])
def test_a_time_without_zone_or_form_is_malformed(ts: object) -> None:
    with pytest.raises(Malformed):
        parse_ts(ts)
    assert parse_ts("2026-12-01T00:00:00.000Z").tzinfo is not None
