"""The verified point: a look at a run checks only the lines after the point the last look
reached, and a change to anything the point covers — a chunk, state.json, the point itself —
sends the record back to the whole check, which refuses damage as it always did."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_verify import history

from omg.state import fold
from omg.state.store import CHUNK_EVENTS, MAX_LINE, RunDir, canonical_json, load_run
from omg.state.verify import Damaged, Snapshot
from omg.state.vouched import VERIFIED, read_point, verify_from


def line(ev: dict[str, Any]) -> str:
    return json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n"


def write_run(path: Path, evs: list[dict[str, Any]]) -> RunDir:
    """The run directory a leg leaves: events.jsonl, chunks of CHUNK_EVENTS lines, state.json."""
    rd = RunDir(path)
    rd.chunks_path.mkdir(parents=True, exist_ok=True)
    for i in range(0, len(evs), CHUNK_EVENTS):
        target = rd.chunk_path(i + 1) if i else rd.events_path
        target.write_text("".join(line(e) for e in evs[i : i + CHUNK_EVENTS]))
    rd.state_path.write_text(canonical_json(fold(evs)))
    return rd


def looked_at(tmp_path: Path, legs: int = 4, per_leg: int = 100) -> tuple[RunDir, list[Any]]:
    """A run of several chunks, looked at once: its point is recorded."""
    evs = history(legs, per_leg)
    rd = write_run(tmp_path / "runs" / "r", evs)
    assert len(rd.segments()) >= 4
    load_run(rd)
    point = read_point(rd.path)
    assert point is not None and point.seq == len(evs)
    return rd, evs


def edit(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))


def test_a_look_records_the_point_it_reached_and_the_next_folds_on_from_it(
    tmp_path: Path,
) -> None:
    rd, evs = looked_at(tmp_path)
    base = {"schema": 1, "ts": "2026-12-01T00:00:00.000Z", "run_id": "r", "leg": 5}
    more = [{**base, "event": "run_started"}]  # a leg more, as a leg appends it: the last
    for _ in range(150):  # chunk continued, then new ones
        more.append({**base, "event": "node_started", "node_id": "n"})
        more.append({**base, "event": "node_retried", "node_id": "n", "reason": "leg_budget",
                     "cause": "nonzero_exit", "cost_usd": 0.25})  # fmt: skip
    for seq, ev in enumerate(more, len(evs) + 1):
        ev["seq"] = seq
    for ev in more:
        rd.append_event(ev)
    rd.close()
    state, last = load_run(rd)
    assert last == len(evs) + len(more) and state == fold(evs + more)
    point = read_point(rd.path)
    assert point is not None and point.seq == last and point.state == state


def test_the_check_folds_on_from_the_point_not_from_the_first_line(tmp_path: Path) -> None:
    """What the point vouches for is taken from it: a marker put in its fold (and in
    state.json, which must agree with it) comes out of the check."""
    rd, evs = looked_at(tmp_path)
    point = read_point(rd.path)
    assert point is not None
    point.state["inputs"] = {"marker": "from the point"}
    snap = fold(evs)
    snap["inputs"] = {"marker": "from the point"}
    state, _, _ = verify_from(
        rd.segments(), Snapshot(snap, rd.state_path), max_line=MAX_LINE, point=point
    )
    assert state["inputs"] == {"marker": "from the point"}


# -- a record changed behind omg's back, after the point was recorded, is still refused ------
def _chunk(rd: RunDir, k: int) -> Path:
    return rd.segments()[k]


def _cost_changed(rd: RunDir) -> None:  # same length: only the bytes' hash can tell
    edit(_chunk(rd, 1), b'"cost_usd":0.25', b'"cost_usd":0.75')


def _event_dropped(rd: RunDir) -> None:
    path = _chunk(rd, 2)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:5] + lines[6:]))


def _chunk_removed(rd: RunDir) -> None:
    _chunk(rd, 1).unlink()


def _chunk_grown(rd: RunDir) -> None:
    with _chunk(rd, 1).open("ab") as fh:
        fh.write(_chunk(rd, 1).read_bytes().splitlines(keepends=True)[-1])


def _first_file_edited(rd: RunDir) -> None:
    edit(rd.events_path, b'"cost_usd":0.25', b'"cost_usd":0.00')


def _state_edited(rd: RunDir) -> None:
    edit(rd.state_path, b'"cost_usd": 100.5', b'"cost_usd": 100.0')


def _chunk_swapped_for_another_runs(rd: RunDir) -> None:
    other = write_run(rd.path.parent / "other", history(4, 100, run_id="other"))
    shutil.copyfile(other.segments()[1], _chunk(rd, 1))


@pytest.mark.parametrize(
    "tamper",
    [
        _cost_changed,
        _event_dropped,
        _chunk_removed,
        _chunk_grown,
        _first_file_edited,
        _state_edited,
        _chunk_swapped_for_another_runs,
    ],
)
def test_a_change_to_what_the_point_covers_is_refused(tmp_path: Path, tamper: Any) -> None:
    rd, _ = looked_at(tmp_path)
    before = (rd.path / VERIFIED).read_bytes()
    tamper(rd)
    with pytest.raises(Damaged):
        load_run(rd)
    assert (rd.path / VERIFIED).read_bytes() == before  # a refusal records no point


def test_a_point_moved_to_another_run_is_not_used(tmp_path: Path) -> None:
    rd, _ = looked_at(tmp_path)
    twin = rd.path.with_name("twin")
    shutil.copytree(rd.path, twin)
    assert read_point(twin) is None  # the directory's name is the run's
    with pytest.raises(Damaged, match="belongs to run 'r', not 'twin'"):
        load_run(RunDir(twin))


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{not json",
        b'{"check": 1}',
        b"[1, 2]",
    ],
)
def test_a_damaged_point_never_refuses_a_sound_record_and_is_replaced(
    tmp_path: Path, damage: bytes
) -> None:
    rd, evs = looked_at(tmp_path)
    (rd.path / VERIFIED).write_bytes(damage)
    state, last = load_run(rd)
    assert state == fold(evs) and last == len(evs)
    assert read_point(rd.path) is not None


def test_a_point_whose_fold_was_changed_never_refuses_a_sound_record(tmp_path: Path) -> None:
    rd, evs = looked_at(tmp_path)
    point = json.loads((rd.path / VERIFIED).read_text())
    point["state"]["cost_usd"] = 99.0
    (rd.path / VERIFIED).write_text(json.dumps(point))
    state, _ = load_run(rd)
    assert state == fold(evs)
    fresh = read_point(rd.path)
    assert fresh is not None and fresh.state == fold(evs)


def test_a_point_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    rd, evs = looked_at(tmp_path)
    outside = tmp_path / "elsewhere.json"
    os.replace(rd.path / VERIFIED, outside)
    (rd.path / VERIFIED).symlink_to(outside)
    assert read_point(rd.path) is None
    assert load_run(rd)[0] == fold(evs)


def test_a_point_taken_after_a_start_counts_the_start_line(tmp_path: Path) -> None:
    """A look while a node runs: the log ends with a node_started, which the fold's seq does
    not count; the point does, so the next line must hold the seq after it."""
    evs = history(2, 100)
    base = {"schema": 1, "ts": "2026-12-01T00:00:00.000Z", "run_id": "r", "leg": 3}
    opening = {**base, "seq": len(evs) + 1, "event": "run_started"}
    started = {**base, "seq": len(evs) + 2, "event": "node_started", "node_id": "n"}
    rd = write_run(tmp_path / "runs" / "r", [*evs, opening, started])
    rd.state_path.write_text(canonical_json(fold([*evs, opening])))
    load_run(rd)
    point = read_point(rd.path)
    assert point is not None and point.seq == len(evs) + 2 == point.state["seq"] + 1
    with rd.segments()[-1].open("a") as fh:
        fh.write(line({**started, "seq": len(evs) + 2}))  # the start's seq again
    with pytest.raises(Damaged, match=f"has seq {len(evs) + 2} where seq {len(evs) + 3}"):
        load_run(rd)


def test_a_point_reached_from_a_point_covers_every_byte_of_each_file(tmp_path: Path) -> None:
    """A look that folds on from the point into the same file (a leg continuing its chunk),
    through lines of text that is not ASCII: the point it leaves names each file's every byte,
    so the look after it can use it."""
    rd, evs = looked_at(tmp_path)
    base = {"schema": 1, "ts": "2026-12-01T00:00:00.000Z", "run_id": "r", "leg": 5}
    more = [
        {**base, "event": "run_started"},
        {**base, "event": "node_started", "node_id": "n"},
        {**base, "event": "node_failed", "node_id": "n", "verdict": "FAIL", "cause": "nonzero_exit",
         "detail": "déjà vu ✓ — ünïcode"},
    ]  # fmt: skip
    for seq, ev in enumerate(more, len(evs) + 1):
        rd.append_event({**ev, "seq": seq})
    rd.close()
    load_run(rd)
    point = read_point(rd.path)
    assert point is not None and point.seq == len(evs) + 3
    data = b"".join(p.read_bytes() for p in rd.segments())
    assert [f.size for f in point.files] == [p.stat().st_size for p in rd.segments()]
    assert point.sha256 == hashlib.sha256(data).hexdigest()
