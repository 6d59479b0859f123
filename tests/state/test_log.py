"""The event log as one stream: every chunk's lines in seq order exactly as recorded, only once
the whole record is verified; and a follow that gives what a leg appends until the leg ends —
recorded its end, stopped without one, or none was running — and refuses damage appended
meanwhile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omg.state import empty_state
from omg.state.log import Follow, lines, read
from omg.state.recorder import Recorder
from omg.state.store import RunDir
from omg.state.verify import Damaged
from tests.state.test_chunks import record


def recorded(rd: RunDir) -> list[str]:
    """Every line of every file of the log, in file order, without newlines."""
    return [line for p in rd.segments() for line in p.read_text().splitlines()]


class Clock:
    """Time that passes only when the follow sleeps; ``then`` runs at each sleep."""

    def __init__(self, then: Any = None) -> None:
        self.now, self.naps, self.then = 0.0, 0, then

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.naps += 1
        if self.then is not None:
            self.then(self.naps)

    def __call__(self) -> float:
        return self.now


def test_every_chunk_reads_as_one_stream_in_seq_order_exactly_as_recorded(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)  # 300 events: events.jsonl and two chunks
    assert len(rd.segments()) == 3
    state, stream = read(rd)
    got = list(stream)
    assert [g.seq for g in got] == list(range(1, 301))
    assert [g.text for g in got] == recorded(rd)
    assert got[-1].event["event"] == "run_finished" and state["seq"] == 300
    # from a seq on, up to a seq: only those lines (the files before are not needed)
    assert [g.seq for g in lines(rd, 200, 260)] == list(range(201, 261))
    assert list(lines(rd, 300, 300)) == []


def test_a_follow_of_a_run_no_leg_runs_gives_everything_and_ends_idle(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=70)
    clock = Clock()
    follow = Follow(RunDir(rd.path), sleep=clock.sleep, clock=clock)
    assert [g.text for g in follow] == recorded(rd)
    assert follow.ended == "idle" and clock.naps == 0


def _open_leg(path: Path, passes: int) -> tuple[RunDir, Recorder]:
    """A leg in flight: its lock held, ``passes`` nodes passed, no run_finished yet."""
    rd = RunDir(path)
    rd.lock()
    rec = Recorder(rd, empty_state(), leg=1)
    graph = {"name": "g", "nodes": [{"id": f"n{i}", "run": "true"} for i in range(400)]}
    rec.emit("run_started", graph=graph, graph_source="g.yaml", inputs={})  # type: ignore[typeddict-item]
    for i in range(passes):
        rec.emit("node_started", node_id=f"n{i}")
        rec.emit("node_passed", node_id=f"n{i}", verdict="PASS", provenance="exit-only")
    return rd, rec


def test_a_follow_gives_what_the_leg_appends_across_chunks_until_it_records_its_end(
    tmp_path: Path,
) -> None:
    rd, rec = _open_leg(tmp_path / "r", passes=60)  # 121 lines, all in events.jsonl

    def leg(nap: int) -> None:  # while the follow waits, the leg goes on past line 128
        if nap == 1:
            for i in range(60, 90):
                rec.emit("node_started", node_id=f"n{i}")
                rec.emit("node_passed", node_id=f"n{i}", verdict="PASS", provenance="exit-only")
        if nap == 3:
            rec.emit("run_finished", outcome="passed")
            rd.close()

    clock = Clock(leg)
    follow = Follow(RunDir(rd.path), sleep=clock.sleep, clock=clock)
    got = list(follow)
    assert [g.seq for g in got] == list(range(1, 183)) and len(rd.segments()) == 2
    assert [g.text for g in got] == recorded(rd)
    assert follow.ended == "finished"


def test_a_follow_ends_when_the_leg_stops_without_recording_its_end(tmp_path: Path) -> None:
    rd, _ = _open_leg(tmp_path / "r", passes=3)
    rd.close()  # killed: the OS released its lock, no run_finished
    clock = Clock()
    follow = Follow(RunDir(rd.path), sleep=clock.sleep, clock=clock)
    assert len(list(follow)) == 7
    assert follow.ended == "stopped" and clock.now >= Follow.QUIET_S


def test_a_follow_waits_while_the_lock_is_held_however_quiet_the_leg(tmp_path: Path) -> None:
    rd, rec = _open_leg(tmp_path / "r", passes=1)

    def leg(nap: int) -> None:
        if nap == 40:  # 8 s of silence (a long node), then the leg ends
            rec.emit("run_finished", outcome="passed")
            rd.close()

    clock = Clock(leg)
    follow = Follow(RunDir(rd.path), sleep=clock.sleep, clock=clock)
    assert [g.seq for g in follow] == [1, 2, 3, 4] and follow.ended == "finished"


@pytest.mark.parametrize("damage", [b"{not json\n", b'{"seq": 1}\n'])
def test_damage_appended_while_following_is_refused_naming_file_and_line(
    tmp_path: Path, damage: bytes
) -> None:
    rd, _ = _open_leg(tmp_path / "r", passes=2)

    def garble(nap: int) -> None:
        if nap == 1:
            with rd.events_path.open("ab") as fh:
                fh.write(damage)

    clock = Clock(garble)
    stream = iter(Follow(RunDir(rd.path), sleep=clock.sleep, clock=clock))
    assert [next(stream).seq for _ in range(5)] == [1, 2, 3, 4, 5]
    with pytest.raises(Damaged) as err:
        next(stream)
    assert err.value.path == rd.events_path and err.value.line == 6
    rd.close()


def test_a_damaged_record_gives_no_line_at_all(tmp_path: Path) -> None:
    rd = record(tmp_path / "r", passes=149)
    chunk = rd.segments()[1]
    text = chunk.read_text().splitlines(keepends=True)
    text[4] = text[4].replace('"node_id":"n', '"node_id":"m')  # a line that folds otherwise
    chunk.write_text("".join(text))
    with pytest.raises(Damaged):
        read(rd)
    with pytest.raises(Damaged):
        next(iter(Follow(RunDir(rd.path))))
