"""The recorder (omg.state.recorder): numbered, masked, folded, and state.json written at
checkpoints and at most once a second as nodes settle."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omg.errors import StateError
from omg.mask import Masker
from omg.state import empty_state, fold
from omg.state.recorder import STATE_EVERY, Recorder
from omg.state.store import RunDir

SECRET = "sk-ant-recorder-secret-0123456789"


@pytest.fixture
def rec(tmp_path: Path) -> Iterator[Recorder]:
    rundir = RunDir(tmp_path / "r1", Masker(frozenset([SECRET])))
    rundir.lock()
    r = Recorder(rundir, empty_state(), leg=1)
    r.emit("run_started", graph={}, inputs={})
    yield r
    rundir.close()


def lines(rec: Recorder) -> list[dict[str, Any]]:
    return [json.loads(x) for x in rec.rundir.events_path.read_text().splitlines()]


def on_disk(rec: Recorder) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(rec.rundir.state_path.read_text())
    return loaded


def test_events_are_numbered_on_and_carry_run_and_leg(rec: Recorder) -> None:
    rec.emit("node_started", node_id="a")
    rec.emit("node_passed", node_id="a", verdict="PASS")
    assert [(e["seq"], e["run_id"], e["leg"]) for e in lines(rec)] == [
        (1, "r1", 1),
        (2, "r1", 1),
        (3, "r1", 1),
    ]
    assert rec.last_seq == 3


def test_none_fields_are_left_out(rec: Recorder) -> None:
    ev = rec.emit("node_passed", node_id="a", detail=None)
    assert "detail" not in ev and "detail" not in lines(rec)[-1]


def test_a_secret_is_masked_before_it_is_written_and_folded(rec: Recorder) -> None:
    rec.emit("node_failed", node_id="a", detail=f"token {SECRET} leaked")
    assert SECRET not in rec.rundir.events_path.read_text()
    assert SECRET not in json.dumps(rec.state)
    assert SECRET not in rec.rundir.state_path.read_text()


# (case, the event after run_started, whether state.json is rewritten)
SETTLES = [
    ("a pass settles", ("node_passed", {"node_id": "a"}), True),
    ("a failure settles", ("node_failed", {"node_id": "a"}), True),
    (
        "a fired arc settles",
        ("node_retried", {"node_id": "a", "reason": "feedback", "round": 1}),
        True,
    ),
    (
        "a retry's attempt only appends",
        ("node_retried", {"node_id": "a", "reason": "retry"}),
        False,
    ),
    ("a start only appends", ("node_started", {"node_id": "a"}), False),
    ("a decision only appends (its verdict follows)", ("gate_approved", {"node_id": "g"}), False),
]


@pytest.mark.parametrize(
    ("event", "written"), [c[1:] for c in SETTLES], ids=[c[0] for c in SETTLES]
)
def test_state_json_is_written_when_a_node_settles_a_second_after_the_last_write(
    rec: Recorder, event: tuple[str, dict[str, Any]], written: bool
) -> None:
    now = [1e9]
    rec.clock = lambda: now[0]
    rec.flush()
    before = on_disk(rec)["seq"]
    now[0] += STATE_EVERY
    rec.emit(event[0], **event[1])  # type: ignore[arg-type]
    assert (on_disk(rec)["seq"] != before) is written


def test_settled_nodes_within_a_second_of_the_last_write_only_append(rec: Recorder) -> None:
    now = [1e9]
    rec.clock = lambda: now[0]
    rec.emit("node_passed", node_id="z", verdict="PASS")
    rec.flush()
    for node in ("a", "b", "c"):
        rec.emit("node_passed", node_id=node, verdict="PASS")
        now[0] += STATE_EVERY / 10
    assert on_disk(rec)["seq"] == 2  # the snapshot lags; readers fold the log's tail
    now[0] += STATE_EVERY
    rec.emit("node_passed", node_id="d", verdict="PASS")
    assert on_disk(rec) == rec.state == fold(lines(rec))


def test_the_legs_last_event_writes_state_json_at_once(rec: Recorder) -> None:
    rec.clock = lambda: 1e9
    rec.flush()
    rec.emit("node_passed", node_id="a", verdict="PASS")
    rec.emit("run_finished", outcome="passed")
    assert on_disk(rec) == rec.state == fold(lines(rec))


def test_flush_writes_what_only_appended(rec: Recorder) -> None:
    rec.emit("node_retried", node_id="a", reason="retry")
    rec.flush()
    assert on_disk(rec) == rec.state == fold(lines(rec))


def test_replay_takes_another_process_event_in_order_only(rec: Recorder) -> None:
    other = {
        "schema": 1,
        "seq": 2,
        "ts": "2026-01-01T00:00:00.000Z",
        "run_id": "x",
        "leg": 9,
        "event": "node_passed",
        "node_id": "a",
    }
    got = rec.replay(other)
    assert (got["run_id"], got["leg"], got["ts"]) == ("r1", 1, other["ts"])
    with pytest.raises(ValueError):
        rec.replay({**other, "seq": 5})


def test_a_note_keeps_its_leg_and_time(rec: Recorder) -> None:
    ev = rec.noted(
        {
            "ts": "2026-01-01T00:00:00.000Z",
            "leg": 7,
            "event": "decision_refused",
            "note": True,
            "node_id": "g",
        }
    )
    assert (ev["seq"], ev["leg"], ev["ts"]) == (2, 7, "2026-01-01T00:00:00.000Z")


def test_listeners_see_each_event_with_the_state_it_made(rec: Recorder) -> None:
    seen: list[tuple[str, str]] = []
    rec.listen(lambda ev, st: seen.append((ev["event"], st["nodes"]["a"]["verdict"])))
    rec.emit("node_failed", node_id="a")
    assert seen == [("node_failed", "FAIL")]


def test_the_ref_is_the_seq_until_a_commit_names_it(rec: Recorder) -> None:
    assert rec.ref() == "seq:1"
    rec.state_ref = "commit:abc"
    assert rec.ref() == "commit:abc"


def test_threads_never_share_a_seq(rec: Recorder) -> None:
    def work(i: int) -> None:
        for _ in range(25):
            rec.emit("node_started", node_id=f"n{i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [e["seq"] for e in lines(rec)] == list(range(1, 102))


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_no_number_past_any_bound_reaches_an_event_or_the_state(rec: Recorder, value: float):
    log, snapshot = rec.rundir.events_path.read_bytes(), rec.rundir.state_path.read_bytes()
    capped = {"node_id": "a", "scope": "day", "key": "k", "cap_usd": 1.0, "spent_usd": value}
    with pytest.raises(StateError, match=r"record capped.spent_usd as a number past any bound"):
        rec.emit("run_finished", outcome="paused", reason="spend_cap", capped=capped)  # type: ignore[typeddict-item]
    assert rec.rundir.events_path.read_bytes() == log and rec.last_seq == 1  # nothing written
    state = {**rec.state, "cost_usd": value}
    with pytest.raises(StateError, match=r"would record cost_usd as a number past any bound"):
        rec.rundir.write_state(state)  # type: ignore[arg-type]
    assert rec.rundir.state_path.read_bytes() == snapshot
