"""The record check as one streaming pass: the fold it returns, the line it names across chunk
boundaries, the bytes it reads of a damaged file, and the snapshot it accepts at any seq."""

from __future__ import annotations

import io
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from omg.state import fold
from omg.state.store import MAX_LINE, RunDir, canonical_json, load_run
from omg.state.verify import CHUNK, Damaged, Snapshot, verify

#: The event log's first file, read through an opener the tests hand in.
LOG = [Path("runs") / "r" / "events.jsonl"]


def history(legs: int, per_leg: int, run_id: str = "r") -> list[dict[str, Any]]:
    """A sound event stream: legs of retried attempts of one node, then a pass."""
    out: list[dict[str, Any]] = []

    def emit(leg: int, kind: str, **fields: Any) -> None:
        base = {"schema": 1, "seq": len(out) + 1, "ts": "2026-12-01T00:00:00.000Z"}
        out.append({**base, "run_id": run_id, "leg": leg, "event": kind, **fields})

    graph = {"name": "g", "nodes": [{"id": "n", "run": "true"}]}
    for leg in range(1, legs + 1):
        extra = {"graph": graph, "graph_source": "g.yaml", "graph_sha256": "", "inputs": {}}
        emit(leg, "run_started", **(extra if leg == 1 else {}))
        for _ in range(per_leg):
            emit(leg, "node_started", node_id="n")
            emit(leg, "node_retried", node_id="n", reason="leg_budget", cause="nonzero_exit",
                 cost_usd=0.25)  # fmt: skip
        emit(leg, "run_finished", outcome="paused", reason="leg_budget")
    emit(legs, "node_started", node_id="n")
    emit(legs, "node_passed", node_id="n", verdict="PASS", provenance="exit-only", cost_usd=0.5)
    return out


def line(ev: dict[str, Any]) -> bytes:
    return (json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n").encode()


def run_dir(tmp_path: Path, evs: list[dict[str, Any]], snapshot_at: int | None) -> RunDir:
    rd = RunDir(tmp_path / "runs" / "r")
    rd.path.mkdir(parents=True)
    rd.events_path.write_bytes(b"".join(line(e) for e in evs))
    if snapshot_at is not None:
        rd.state_path.write_text(canonical_json(fold(evs[:snapshot_at])))
    return rd


def test_a_history_of_many_chunks_folds_to_what_the_fold_gives(tmp_path: Path) -> None:
    evs = history(legs=60, per_leg=300)
    rd = run_dir(tmp_path, evs, snapshot_at=len(evs) - 3)
    assert rd.events_path.stat().st_size > 3 * CHUNK  # lines straddle chunk boundaries
    state, last = load_run(rd)
    assert last == len(evs) and state == fold(evs)


@pytest.mark.parametrize("where", ["first line of a chunk", "line across a chunk boundary"])
def test_the_line_named_is_exact_across_chunk_boundaries(tmp_path: Path, where: str) -> None:
    evs = history(legs=30, per_leg=300)
    data = b"".join(line(e) for e in evs)
    at = data.index(b"\n", CHUNK * 2) + (1 if where.startswith("first") else -40)
    n = data.count(b"\n", 0, at) + 1  # the line that byte is on
    start = data.rfind(b"\n", 0, at) + 1
    end = data.index(b"\n", at)
    for garbage in (b"\xff\xfe", b"}}"):
        broken = data[:start] + data[start:end].replace(b'"event"', garbage, 1) + data[end:]
        with pytest.raises(Damaged) as refused:
            verify(LOG, max_line=MAX_LINE, opener=lambda _, b=broken: io.BytesIO(b))
        assert refused.value.line == n, (garbage, refused.value)


def test_an_endless_line_is_refused_after_reading_about_a_line_not_the_file(
    tmp_path: Path,
) -> None:
    head = b"".join(line(e) for e in history(legs=1, per_leg=2))
    stream = io.BytesIO(head + b"x" * (50 * MAX_LINE))
    with pytest.raises(Damaged, match="longer than 1 MiB") as refused:
        verify(LOG, max_line=MAX_LINE, opener=lambda _: nullcontext(stream))
    assert refused.value.line == head.count(b"\n") + 1
    assert stream.tell() <= MAX_LINE + 2 * CHUNK


def test_a_snapshot_at_any_seq_a_leg_wrote_is_accepted_and_caught_up(tmp_path: Path) -> None:
    evs = history(legs=3, per_leg=2)
    for k, ev in enumerate(evs, 1):
        if ev["event"] == "node_started":
            continue  # a snapshot never ends at a start: it changes nothing, not even seq
        snap = Snapshot(fold(evs[:k]), tmp_path / "r" / "state.json")
        data = io.BytesIO(b"".join(line(e) for e in evs))
        state, last = verify(LOG, snap, max_line=MAX_LINE, opener=lambda _, d=data: d)
        assert state == fold(evs) and last == len(evs)


def test_a_snapshot_claiming_a_start_for_its_seq_is_refused(tmp_path: Path) -> None:
    evs = history(legs=1, per_leg=2)
    forged = fold(evs[:2])
    forged["seq"] = 2  # event 2 is a node_started, which no snapshot is folded up to
    data = io.BytesIO(b"".join(line(e) for e in evs))
    snap = Snapshot(forged, tmp_path / "r" / "state.json")
    with pytest.raises(Damaged, match="says seq is 2, but the events up to seq 2"):
        verify(LOG, snap, max_line=MAX_LINE, opener=lambda _: data)


def test_an_event_past_the_snapshot_is_checked_against_the_event_schema(tmp_path: Path) -> None:
    evs = history(legs=1, per_leg=2)
    evs[-1]["provenance"] = "trust me"  # folds without complaint, but no such provenance
    rd = run_dir(tmp_path, evs, snapshot_at=len(evs) - 2)
    with pytest.raises(Damaged, match="provenance") as refused:
        load_run(rd)
    assert refused.value.line == len(evs)
    assert refused.value.path == rd.events_path


@pytest.mark.parametrize("sub", ["artifacts", "failed", "feedback", "sessions"])
def test_a_payload_directory_that_is_a_link_or_a_file_is_refused(tmp_path: Path, sub: str) -> None:
    evs = history(legs=1, per_leg=1)
    outside = tmp_path / "outside"
    outside.mkdir()
    for make in ("link", "file"):
        rd = run_dir(tmp_path / make, evs, snapshot_at=len(evs))
        if make == "link":  # omg would write the node's output through it, out of the run
            (rd.path / sub).symlink_to(outside)
        else:
            (rd.path / sub).write_text("a file where a directory belongs\n")
        with pytest.raises(Damaged, match="not a directory omg writes in") as refused:
            load_run(rd)
        assert refused.value.path == rd.path / sub
    assert not list(outside.iterdir())
