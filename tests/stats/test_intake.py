"""A run branch's record taken in: state.json caught up with the events past it, and every way a
fetched branch can hold what omg never wrote refused as damaged — never raised."""

from __future__ import annotations

import json
from typing import Any

import pytest

from omg.git.runscan import RunBlobs
from omg.state import fold
from omg.state.store import canonical_json
from omg.stats.facts import Damaged, RunFacts
from omg.stats.intake import take

from .test_facts import ROUND, log, ran, start

EVENTS = log(
    start(), *ROUND, ("node_passed", {"node_id": "review", "verdict": "PASS",
                                      "provenance": "verified", "round": 1, "cost_usd": 0.5}),
    ("gate_paused", {"node_id": "merge"}),
    ("run_finished", {"outcome": "paused", "reason": "gate", "paused_at": "merge"}),
)  # fmt: skip


def blobs(events: list[Any] = EVENTS, *, upto: int | None = None, **kw: Any) -> RunBlobs:
    state = canonical_json(fold(events[: len(events) if upto is None else upto])).encode()
    lines = "".join(json.dumps(e) + "\n" for e in events).encode()
    fields: dict[str, Any] = {"run_id": "r", "commit": "c" * 40, "state": state, "log": (lines,)}
    return RunBlobs(**{**fields, **kw})


def test_a_state_json_behind_its_log_is_caught_up_with_the_events_past_it() -> None:
    behind = take(blobs(upto=len(EVENTS) - 3))  # before review passed and the gate paused
    assert isinstance(behind, RunFacts)
    assert behind.outcome == "paused" and behind.cost_usd == 0.5
    assert [loop.ending for loop in behind.loops] == ["converged"]
    assert take(blobs()) == behind
    assert take(blobs(state=None)) == behind  # no state.json yet: the whole log is folded


def test_a_log_in_chunks_reads_as_one() -> None:
    lines = [json.dumps(e) + "\n" for e in EVENTS]
    chunked = blobs(log=("".join(lines[:4]).encode(), "".join(lines[4:]).encode()))
    assert take(chunked) == take(blobs())


def state_with(**kw: Any) -> bytes:
    return canonical_json({**fold(EVENTS), **kw}).encode()


DAMAGED: dict[str, tuple[dict[str, Any], str]] = {
    "a tree that is not a run's": ({"problem": "no events.jsonl at c"}, "no events.jsonl"),
    "a log that is not UTF-8": ({"log": (b"\xff\xfe{}\n",)}, "not UTF-8"),
    "a line that is not JSON": ({"log": (b'{"seq": 1, "event": "x"}\n{oops\n',)}, "not JSON"),
    "a line out of order": (
        {"log": ("".join(json.dumps(e) + "\n" for e in EVENTS[1:]).encode(),)}, "not event 1"),
    "a line that is no event": ({"log": (b"[1, 2]\n",)}, "not event 1"),
    "nested past what Python reads": ({"log": (b"[" * 100_000 + b"]" * 100_000,)}, "not JSON"),
    "a state.json that is not JSON": ({"state": b"{"}, "state.json is not JSON"),
    "a state.json that is no state": ({"state": b"[]"}, "not a run's state"),
    "a state.json past its log": ({"state": state_with(seq=999)}, "past the log"),
    "a state.json of another shape": ({"state": state_with(cost_usd="lots")}, "its schema"),
    "a verdict no fold makes": ({"state": state_with(status="won")}, "its schema"),
    "another run's record": ({"run_id": "other"}, "record of run 'r'"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_record_omg_could_not_have_written_is_damaged_not_raised(case: str) -> None:
    change, said = DAMAGED[case]
    found = take(blobs(**change))
    assert isinstance(found, Damaged), found
    assert said in found.why and found.commit == "c" * 40


def test_an_event_past_state_json_that_does_not_fold_is_damaged() -> None:
    bad = [*EVENTS, {**EVENTS[-1], "seq": len(EVENTS) + 1, "event": "node_passed"}]
    found = take(blobs(bad, upto=len(EVENTS)))  # node_passed with no node_id
    assert isinstance(found, Damaged) and "does not fold" in found.why


def test_an_event_the_facts_cannot_read_is_damaged() -> None:
    bad = log(start(), *ran("impl"), ("gate_paused", {"node_id": "merge"}))
    bad[-1]["ts"] = "at noon"  # type: ignore[typeddict-item]
    found = take(blobs(bad))
    assert isinstance(found, Damaged) and "'at noon' is not an ISO 8601 time" in found.why
