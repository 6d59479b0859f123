"""The recorder: the one writer of a run's events, folding each into state.json as it lands."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar, Unpack, cast

from omg.records import State
from omg.state.events import Event, EventFields, EventKind
from omg.state.fold import EVENT_SCHEMA, apply

if TYPE_CHECKING:
    from omg.state.store import RunDir

#: Events after which state.json may be rewritten for live readers: whatever settles a node (or
#: a leg). A retry's attempt, a start and a gate decision (its verdict follows at once) only
#: append.
_MID_EXECUTION = ("node_started", "gate_approved", "gate_rejected")
#: Seconds between rewrites of state.json while a leg runs (for readers such as `omg status`,
#: which fold the log's tail anyway): the checkpoints write it whenever they fall.
STATE_EVERY = 1.0


def _settles(ev: Event) -> bool:
    if ev["event"] in _MID_EXECUTION:
        return False
    return not (ev["event"] == "node_retried" and ev.get("reason") == "retry")


T = TypeVar("T")

Listener = Callable[[Event, State], None]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _touched(ev: Event) -> frozenset[str] | None:
    """The node records an event can change (None: any of them)."""
    if ev["event"] == "run_started":
        return None
    return frozenset(str(ev[k]) for k in ("node_id", "declarer") if k in ev)


class Recorder:
    """Appends events, folds them into the state, rewrites state.json atomically.

    Thread-safe: runners report from worker threads. The event log is the record: each event is
    appended as it happens. state.json is a snapshot written at checkpoints — the leg's start,
    its last event (a pause or the end), before a commit that is pushed (``flush``) — and
    between them at most once every ``STATE_EVERY`` seconds after a node settles, so its cost
    does not grow with the number of nodes. Whoever reads a run catches the snapshot up with the
    fold of the event log (``store.load_run``), so a killed leg loses only the nodes it had in
    flight. The leg's last event checkpoints the run directory (fsync), before the final commit.
    """

    def __init__(self, rundir: RunDir, state: State, leg: int, last_seq: int = 0) -> None:
        self.rundir = rundir
        self._last_seq = max(last_seq, state["seq"])
        self.state = state
        self.leg = leg
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self.state_ref: str | None = None  # set by the run's commits to "commit:<sha>"
        self._dirty: frozenset[str] | None = frozenset()  # records changed since the last write
        self._written = float("-inf")  # when state.json was last written (monotonic seconds)
        self._written_seq = -1  # the seq state.json was last written at by this recorder
        self.clock: Callable[[], float] = time.monotonic

    def listen(self, fn: Listener) -> None:
        self._listeners.append(fn)

    def emit(
        self, event: EventKind, fields: EventFields | None = None, /, **more: Unpack[EventFields]
    ) -> Event:
        """Append one event (``fields`` then ``more``; None values left out), fold it, return it."""
        with self._lock:
            given: EventFields = {**(fields or {}), **more}
            present = cast(EventFields, {k: v for k, v in given.items() if v is not None})
            ev: Event = {
                "schema": EVENT_SCHEMA,
                "seq": self._last_seq + 1,
                "ts": now_iso(),
                "run_id": self.rundir.run_id,
                "leg": self.leg,
                "event": event,
                **present,
            }
            return self._append(ev)

    def replay(self, ev: Event) -> Event:
        """Append an event another process recorded (a matrix job's, merged by the fold): its
        fields and time kept, numbered and put in this leg (``seq`` must follow on)."""
        with self._lock:
            if ev["seq"] != self._last_seq + 1:
                raise ValueError(f"replayed event seq {ev['seq']} after {self._last_seq}")
            # state.json is written once the wave is in (the fold's next commit flushes it)
            return self._append({**ev, "run_id": self.rundir.run_id, "leg": self.leg}, False)

    @property
    def last_seq(self) -> int:
        """The seq of the last event appended."""
        return self._last_seq

    def noted(self, note: Mapping[str, object]) -> Event:
        """Append a note recorded off the run branch (a refused decision, a dispatch): its
        fields, time and leg (the one it was noted in) kept, numbered on."""
        with self._lock:
            envelope = {"schema": EVENT_SCHEMA, "seq": self._last_seq + 1, "ts": note["ts"]}
            ev = cast(Event, {**envelope, "run_id": self.rundir.run_id, "leg": note["leg"], **note})
            return self._append(ev)

    def _append(self, ev: Event, write: bool = True) -> Event:
        with self._lock:
            event = ev["event"]
            ev = self.rundir.append_event(ev)  # masked: the state folds what was written
            self._last_seq = ev["seq"]
            apply(self.state, ev)
            if event != "node_started":
                touched = _touched(ev)
                self._dirty = (
                    None if self._dirty is None or touched is None else self._dirty | touched
                )
                if write and _settles(ev):
                    self.flush_due()
            if event == "run_finished":
                self.flush()  # the leg's end (or pause) is a checkpoint
                self.rundir.checkpoint()
            for fn in self._listeners:
                fn(ev, self.state)
            return ev

    def flush(self) -> None:
        """Write state.json now if events landed since the last write (a checkpoint)."""
        with self._lock:
            if self._dirty is None or self._dirty or self._written_seq != self.state["seq"]:
                self._write()

    def flush_due(self) -> None:
        """Write state.json if events landed and the last write is ``STATE_EVERY`` old."""
        with self._lock:
            if self.clock() - self._written >= STATE_EVERY:
                self.flush()

    def _write(self) -> None:
        touched = None if self._dirty is None else frozenset(self._dirty)
        self.rundir.write_state(self.state, touched)
        self._dirty = frozenset()
        self._written = self.clock()
        self._written_seq = self.state["seq"]

    def ref(self) -> str:
        """What a human judged: the run branch commit when the run lives in git, else the seq."""
        return self.state_ref or f"seq:{self.state['seq']}"

    def read(self, fn: Callable[[State], T]) -> T:
        """Run ``fn`` on the state under the lock (for worker threads)."""
        with self._lock:
            return fn(self.state)
