"""Merging a wave: the matrix jobs' events in graph order whatever order they finished in,
numbered after the base, with each job's own leg bookkeeping dropped."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from omg.state.wave import merge_wave

ORDER = [f"t{i:02d}" for i in range(12)]
BASE = 7


def job(node: str, finished_at: int) -> list[dict[str, object]]:
    """What one matrix job's events.jsonl holds past the base: its leg and its node."""
    seq = iter(range(BASE + 1, BASE + 10))
    return [
        {"seq": 3, "event": "node_passed", "node_id": "root"},  # the base, copied with the run
        {"seq": next(seq), "event": "run_started", "leg": 2},
        {"seq": next(seq), "event": "node_started", "node_id": node, "leg": 2},
        {
            "seq": next(seq),
            "event": "node_passed",
            "node_id": node,
            "leg": 2,
            "ts": f"2026-12-03T12:00:{finished_at:02d}Z",
        },
        {"seq": next(seq), "event": "run_finished", "leg": 2},
    ]


def test_the_wave_is_the_jobs_node_events_in_graph_order_numbered_after_the_base() -> None:
    published = {n: job(n, 59 - i) for i, n in enumerate(ORDER)}  # the last entry finished first
    merged = merge_wave(BASE, 3, published, ORDER)
    assert [e["seq"] for e in merged] == list(range(BASE + 1, BASE + 1 + 24))
    assert [e["node_id"] for e in merged[::2]] == ORDER
    assert {e["event"] for e in merged} == {"node_started", "node_passed"}
    assert {e["leg"] for e in merged} == {3}


@given(st.randoms(use_true_random=False), st.integers(1, 12))
def test_any_finish_or_fetch_order_merges_to_the_same_bytes(rng: random.Random, n: int) -> None:
    entries = ORDER[:n]
    published = {e: job(e, rng.randrange(60)) for e in entries}
    reference = json.dumps(merge_wave(BASE, 3, published, ORDER), sort_keys=True)
    shuffled = list(published.items())
    rng.shuffle(shuffled)
    assert json.dumps(merge_wave(BASE, 3, dict(shuffled), ORDER), sort_keys=True) == reference


def test_an_entry_outside_the_graph_order_is_refused() -> None:
    with pytest.raises(ValueError, match="nope"):
        merge_wave(BASE, 3, {"nope": job("nope", 1)}, ORDER)
