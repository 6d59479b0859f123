"""The event log as one stream: every file of it (events.jsonl, then the chunks) read back line
by line as recorded, only after the whole record is verified; and followed while a leg appends."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from omg.records import State
from omg.state.chunks import MAX_LINE, open_record
from omg.state.events import Event
from omg.state.store import RunDir, load_run
from omg.state.verify import events_fix

#: How a follow ended: the leg recorded its end, it stopped without (killed, or running on
#: another machine), or none was running here to follow.
Ended = Literal["finished", "stopped", "idle"]


@dataclass(frozen=True)
class Line:
    """One event of the log: its seq, the line exactly as recorded (without its newline), and
    the event it holds."""

    seq: int
    text: str
    event: Event


def lines(rundir: RunDir, after: int, upto: int) -> Iterator[Line]:
    """The events ``after`` + 1 … ``upto`` in seq order, each as its file holds it. The record
    was verified up to ``upto`` (``load_run``): only those lines are read, whatever a running
    leg appends meanwhile; the files before ``after`` are not opened."""
    if upto <= after:
        return
    files = rundir.segments()
    starts = [int(p.stem) if p.parent == rundir.chunks_path else 1 for p in files]
    fix = events_fix(rundir.path)
    for i, path in enumerate(files):
        first, end = starts[i], (starts[i + 1] - 1 if i + 1 < len(files) else upto)
        if end <= after or first > upto:
            continue
        with open_record(path, fix) as fh:
            seq = first - 1
            while seq < upto and (raw := fh.readline(MAX_LINE + 1)):
                seq += 1
                if seq > after:
                    text = raw.decode().rstrip("\n")
                    yield Line(seq, text, json.loads(text))


def read(rundir: RunDir) -> tuple[State, Iterator[Line]]:
    """The run's state and every line of its log, the whole record verified first."""
    state, last = load_run(rundir)
    return state, lines(rundir, 0, last)


class Follow:
    """Every line of the log, then each line a running leg appends, until that leg ends: its
    ``run_finished`` (``ended`` "finished"), or no process holds the leg lock any more and
    nothing more was appended ("stopped", or "idle" when no leg was running at all). Each time
    the files change the whole record is verified again, and only verified lines are given."""

    #: How often the files are looked at; how long they may stay unchanged before the leg
    #: lock is probed (a probe takes the lock for an instant, so it is done rarely).
    POLL_S = 0.2
    QUIET_S = 2.0

    def __init__(
        self,
        rundir: RunDir,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rundir, self._sleep, self._clock = rundir, sleep, clock
        self.ended: Ended | None = None

    def __iter__(self) -> Iterator[Line]:
        after, seen, ran = 0, None, False
        quiet_since = self._clock()
        while True:
            now = _signature(self.rundir)
            if now != seen:
                seen, quiet_since = now, self._clock()
                state, last = load_run(self.rundir)
                yield from lines(self.rundir, after, last)
                after = last
                legs = state["legs"]
                if legs and legs[-1]["outcome"] is None:  # a leg runs (or was killed)
                    ran = True
                elif ran:
                    self.ended = "finished"
                    return
                elif self.rundir.probe_lock() == "free":  # none runs, and none is starting
                    self.ended = "idle"
                    return
            elif self._clock() - quiet_since >= self.QUIET_S:
                if self.rundir.probe_lock() == "free" and _signature(self.rundir) == seen:
                    self.ended = "stopped" if ran else "idle"
                    return
                quiet_since = self._clock()
            self._sleep(self.POLL_S)


def _signature(rundir: RunDir) -> tuple[tuple[str, int, int], ...]:
    """What changes when a leg writes the record: each log file's name, size and mtime."""
    out = []
    for path in [rundir.state_path, *rundir.segments()]:
        try:
            st = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            continue
        out.append((path.name, st.st_size, st.st_mtime_ns))
    return tuple(out)
