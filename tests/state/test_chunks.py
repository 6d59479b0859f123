"""The event log in chunks: events.jsonl holds a run's first 128 events, events/<seq>.jsonl the
rest; a resumed leg continues the last chunk; a run recorded in one events.jsonl still loads,
resumes into chunks and replays; and damage in a chunk — a garbled line, a lost or stray chunk
— is refused before anything runs, naming the file and its line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from omg.state import empty_state, fold
from omg.state.recorder import Recorder
from omg.state.store import CHUNK_EVENTS, RunDir, canonical_json, fold_run, load_run
from omg.state.verify import Damaged


def record(path: Path, passes: int, *, leg: int = 1, state: Any = None) -> RunDir:
    """A leg that starts and passes ``passes`` nodes (two events each), then pauses."""
    rd = RunDir(path)
    rd.lock()
    last = 0
    if state is None:
        state = empty_state()
    else:
        state, last = load_run(rd)
    rec = Recorder(rd, state, leg=leg, last_seq=last)
    graph = {"name": "g", "nodes": [{"id": f"n{i}", "run": "true"} for i in range(400)]}
    start: dict[str, Any] = {"graph": graph, "graph_source": "g.yaml", "inputs": {}}
    rec.emit("run_started", **(start if leg == 1 else {}))  # type: ignore[arg-type]
    for i in range(passes):
        node = f"n{(leg - 1) * 100 + i}"
        rec.emit("node_started", node_id=node)
        rec.emit("node_passed", node_id=node, verdict="PASS", provenance="exit-only")
    rec.emit("run_finished", outcome="paused", reason="leg_budget")
    rd.close()
    return rd


def files(rd: RunDir) -> list[tuple[str, int]]:
    return [(p.relative_to(rd.path).as_posix(), len(p.read_text().splitlines()))
            for p in rd.segments()]  # fmt: skip


def test_the_log_is_cut_every_128_lines_and_folds_whole(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)  # 1 + 298 + 1 = 300 events
    assert CHUNK_EVENTS == 128
    assert files(rd) == [
        ("events.jsonl", 128), ("events/0000000129.jsonl", 128), ("events/0000000257.jsonl", 44),
    ]  # fmt: skip
    state, last = load_run(rd)
    assert last == 300 and state == fold(list(rd.read_events()))
    assert [e["seq"] for e in rd.read_events()] == list(range(1, 301))


def test_a_resumed_leg_continues_the_last_chunk_then_starts_the_next(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    record(rd.path, passes=50, leg=2, state=True)  # 1 + 100 + 1 = 102 more: 44 + 84 = 128, +18
    assert files(rd)[2:] == [("events/0000000257.jsonl", 128), ("events/0000000385.jsonl", 18)]
    state, last = load_run(rd)
    assert last == 402 and state == fold_run(rd)
    assert state["legs"][-1]["leg"] == 2


def test_a_run_recorded_in_one_events_jsonl_resumes_into_chunks_and_replays(
    tmp_path: Path,
) -> None:
    old = record(tmp_path / "r", passes=149)
    # the layout of runs recorded before the log was cut: every event in events.jsonl
    text = "".join(p.read_text() for p in old.segments())
    shutil.rmtree(old.chunks_path)
    old.events_path.write_text(text)
    assert files(old) == [("events.jsonl", 300)]
    state, last = load_run(old)
    assert last == 300 and state == fold_run(old)

    record(old.path, passes=10, leg=2, state=True)
    assert files(old) == [("events.jsonl", 300), ("events/0000000301.jsonl", 22)]
    state, last = load_run(old)
    assert last == 322 and state == fold_run(old)
    assert canonical_json(state) == old.state_path.read_text()  # replay agrees


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


@pytest.mark.parametrize("line", [1, 5, 128])
def test_a_garbled_line_in_a_chunk_is_named_by_its_file_and_line(
    tmp_path: Path, line: int
) -> None:
    rd = record(tmp_path / "r", passes=149)
    chunk = rd.chunk_path(129)
    lines = _lines(chunk)
    lines[line - 1] = lines[line - 1].replace('"event"', "}}", 1)
    chunk.write_text("".join(lines))
    with pytest.raises(Damaged) as refused:
        load_run(rd)
    assert (refused.value.path, refused.value.line) == (chunk, line)


def test_a_line_of_another_seq_in_a_chunk_is_refused(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    chunk = rd.chunk_path(257)
    lines = _lines(chunk)
    lines[3], lines[4] = lines[4], lines[3]
    chunk.write_text("".join(lines))
    with pytest.raises(Damaged, match="has seq 261 where seq 260 belongs") as refused:
        load_run(rd)
    assert (refused.value.path, refused.value.line) == (chunk, 4)


def test_a_lost_chunk_is_refused_at_the_chunk_after_it(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    rd.chunk_path(129).unlink()
    with pytest.raises(Damaged, match=r"named for seq 257, but the log before it ends at seq 128"):
        load_run(rd)


def test_a_lost_last_chunk_is_refused_by_the_snapshot_that_folded_it(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    rd.chunk_path(257).unlink()
    with pytest.raises(Damaged, match="does not hold event 300"):
        load_run(rd)


def test_a_chunk_repeated_under_another_name_is_refused(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    shutil.copy(rd.chunk_path(129), rd.chunk_path(200))
    with pytest.raises(Damaged, match="named for seq 200") as refused:
        load_run(rd)
    assert refused.value.path == rd.chunk_path(200)


@pytest.mark.parametrize("name", ["notes.txt", "129.jsonl", "0000000001.jsonl"])
def test_a_file_in_events_that_is_no_chunk_is_refused(tmp_path: Path, name: str) -> None:
    rd = record(tmp_path / "r", passes=149)
    (rd.chunks_path / name).write_text("{}\n")
    with pytest.raises(Damaged, match="is not an event chunk") as refused:
        load_run(rd)
    assert refused.value.path == rd.chunks_path / name


def test_a_chunk_of_another_run_is_refused(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    other = record(tmp_path / "other", passes=149)
    shutil.copy(other.chunk_path(129), rd.chunk_path(129))
    with pytest.raises(Damaged, match="belongs to run 'other'") as refused:
        load_run(rd)
    assert (refused.value.path, refused.value.line) == (rd.chunk_path(129), 1)


def test_events_jsonl_lost_under_its_chunks_is_refused(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    rd.events_path.unlink()
    with pytest.raises(Damaged, match="named for seq 129, but the log before it ends at seq 0"):
        load_run(rd)


def test_state_json_lagging_the_chunks_is_caught_up_by_the_fold(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    evs = list(rd.read_events())
    rd.state_path.write_text(canonical_json(fold(evs[:101])))  # a snapshot 199 events behind
    state, last = load_run(rd)
    assert last == 300 and state == fold(evs)
    assert json.loads(rd.state_path.read_text())["seq"] == 101  # reading never writes
