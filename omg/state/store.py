"""The run directory: its files — state.json, the event log, payloads, transcripts — written
safely, the paths written since the last commit, and the leg lock; the run loaded verified."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from omg import strictjson
from omg.errors import StateError
from omg.mask import NOTHING as UNMASKED
from omg.mask import Masker
from omg.nodefile import on_disk
from omg.records import State
from omg.state import artifacts
from omg.state.chunks import CHUNK_EVENTS, MAX_LINE, EventLog, open_record, opened
from omg.state.events import Event
from omg.state.snapshot import (
    STATE,
    SnapshotEncoder,
    atomic_write,
    canonical_json,
    parse_state,
    shape_problem,
)
from omg.state.verify import Damaged, Snapshot, events_fix, state_fix
from omg.state.vouched import VERIFIED, Point, encoded, read_point, verify_from

__all__ = [
    "CHUNK_EVENTS",
    "MAX_LINE",
    "PAYLOAD_DIRS",
    "RunDir",
    "atomic_write",
    "canonical_json",
    "catch_up",
    "fold_run",
    "load_run",
    "open_record",
]

LOCK = "leg.lock"
#: The directories a leg writes payloads into (outputs, failures, feedback, transcripts).
PAYLOAD_DIRS = ("artifacts", "failed", "feedback", "sessions")
LockProbe = Literal["free", "held"]


class RunDir:
    """One run's directory under ``<runs-dir>/<run-id>/``.

    ``mask`` is the leg's masker: every event, payload and transcript is masked on its way in
    (state.json is the fold of masked events). Reading needs none.
    """

    def __init__(self, path: Path, mask: Masker = UNMASKED) -> None:
        self.path = path
        self.mask = mask
        self._log = EventLog(path, self.changed)
        self._lock_fd: int | None = None
        self._encoder = SnapshotEncoder()
        #: paths (relative, "/"-separated) written or removed since ``take_changes``
        self._changed: set[str] = set()
        self._changes_lock = threading.Lock()
        #: the verified point ``load_run`` reached on this directory in this process
        self.point: Point | None = None
        #: the seq of state.json as ``load_run`` read it (-1: none), None before it ran
        self.snapshot_seq: int | None = None

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def state_path(self) -> Path:
        return self.path / STATE

    @property
    def events_path(self) -> Path:
        return self._log.events_path

    def artifact(self, node_id: str) -> Path:
        return self.path / "artifacts" / f"{on_disk(node_id)}.out"

    def failed(self, node_id: str) -> Path:
        return self.path / "failed" / f"{on_disk(node_id)}.out"

    def feedback(self, node_id: str) -> Path:
        return self.path / "feedback" / f"{on_disk(node_id)}.out"

    def session(self, session_id: str) -> Path:
        """An agent session's transcript, kept with the run so a fresh machine can resume it."""
        return self.path / "sessions" / f"{session_id}.jsonl"

    @property
    def chunks_path(self) -> Path:
        return self._log.chunks_path

    @property
    def log_path(self) -> Path:
        """Where the event log is: the single file of an older run, else the chunks' folder."""
        return self._log.log_path

    def exists(self) -> bool:
        return self.state_path.exists() or self.events_path.exists() or self.chunks_path.exists()

    def segments(self) -> list[Path]:
        """The files of the event log in order (``EventLog.segments``)."""
        return self._log.segments()

    # -- what changed: the paths a commit of the run directory must look at ------------
    def changed(self, path: Path) -> None:
        """Note that ``path`` (inside the run directory) was written or removed."""
        rel = path.relative_to(self.path).as_posix()
        with self._changes_lock:
            self._changed.add(rel)

    def take_changes(self) -> frozenset[str]:
        """The paths written or removed since the last call, and forget them."""
        with self._changes_lock:
            out, self._changed = frozenset(self._changed), set()
        return out

    # -- lock -----------------------------------------------------------------
    def lock(self) -> None:
        """Take the leg lock (flock; released by the OS if the process dies; never unlinked)."""
        self.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateError(
                f"run {self.run_id!r} has a leg in flight (another omg process holds "
                f"{self.path / LOCK}); wait for it to finish, or check `omg status` — "
                "one leg at a time per run"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"omg-leg-lock 1\n{os.getpid()}\n".encode())
        self._lock_fd = fd

    def probe_lock(self) -> LockProbe:
        """Whether some process holds the leg lock right now (without taking it for long)."""
        if self._lock_fd is not None:
            return "held"
        try:
            fd = os.open(self.path / LOCK, os.O_RDWR)
        except FileNotFoundError:
            return "free"
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return "held"
        finally:
            os.close(fd)
        return "free"

    def close(self) -> None:
        self._log.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    # -- events ---------------------------------------------------------------
    def append_event(self, event: Event) -> Event:
        """Append one line, masked (``EventLog.append_event``); the event as written (what the
        state must fold)."""
        return self._log.append_event(self.mask.record(event))

    def chunk_path(self, first_seq: int) -> Path:
        return self._log.chunk_path(first_seq)

    def read_events(self) -> Iterator[Event]:
        """Every event, in order; a torn, oversized or foreign line is a StateError."""
        return self._log.read_events()

    def parse_line(self, raw: bytes, n: int, path: Path) -> Event:
        """Line ``n`` of the log's file ``path`` as ``read_events`` reads it."""
        return self._log.parse_line(raw, n, path)

    def verified(
        self, snapshot: Snapshot | None = None, point: Point | None = None
    ) -> tuple[State, int, Point]:
        """The fold of every event, the last seq and the point reached, each line checked in
        one streaming pass (past ``point`` only, when it holds: ``state.verify``) and
        ``snapshot`` compared with the fold at its seq."""
        files, opener = self._log.checked_files()
        return verify_from(files, snapshot, max_line=MAX_LINE, opener=opener, point=point)

    # -- state ----------------------------------------------------------------
    def read_state(self) -> State:
        """The snapshot, checked for shape and schema version; damage is a clear StateError."""
        fix = state_fix(self.path)
        with opened(self.path, self.state_path, fix) as fh:
            data = fh.read()
        return parse_state(data, self.state_path, fix)

    def write_state(self, state: State, touched: frozenset[str] | None = None) -> None:
        """Rewrite state.json atomically; ``touched`` names the records that changed."""
        try:
            text = canonical_json(state, self._encoder, touched)
        except ValueError:  # a sum past any bound: no record holds one, so none is written
            raise StateError(
                f"{self.state_path} would record {strictjson.unfit(state)} as a number past "
                "any bound (NaN or Infinity), which no record holds; it was not rewritten"
            ) from None
        atomic_write(self.state_path, text)
        self.changed(self.state_path)

    def checkpoint(self) -> None:
        """Make the run directory durable: fsync the event log, state.json and the directory.

        The price of durability is paid here, at the points a run hands over (a leg's end, just
        before its last commit and push), not per node: consistency never depends on fsync
        (append-before-snapshot and atomic renames), and what outlives a lost CI runner is what
        was pushed to the run branch, never its local disk. The SQLite WAL ``synchronous=NORMAL``
        trade-off, for a run directory.
        """
        self._log.sync()
        for path in (self.state_path, self.chunks_path, self.path):
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def write_payload(self, path: Path, text: str) -> bytes:
        """Artifacts and payloads, written before the event that makes them count; the bytes
        written (masked: what a node_passed's ``artifact`` digests).

        Not atomic and not fsync'd on purpose: a payload is only read after its node's
        event is recorded, and a leg killed before that event re-runs the node, rewriting it.
        """
        if not text:  # an empty payload is no file: nothing to write, commit or restore
            self.remove_payload(path)
            return b""
        data = self.mask.text(text).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.changed(path)
        return data

    def write_empty(self, path: Path) -> None:
        """An empty payload's file, made only when a reader is given its path."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        self.changed(path)

    def remove_payload(self, path: Path) -> None:
        """Remove a payload that no longer counts (a failure's reply once its node passed)."""
        try:
            path.unlink()
        except FileNotFoundError:
            return
        self.changed(path)

    def write_session(self, session_id: str, data: bytes) -> Path:
        """A session's transcript, masked, written atomically; where it went."""
        target = self.session(session_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(self.mask.data(data))
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.changed(target)
        return target


def load_run(rundir: RunDir, *, contents: bool = True) -> tuple[State, int]:
    """The run as its whole record says, verified before anything uses it: every line of
    events.jsonl checked and folded in one pass, state.json compared with the fold at its seq,
    and each passed node's artifact file against the size and sha256 its record holds (its
    size only, without ``contents``: the listing of every run).

    Returns that fold — state.json caught up with events a killed leg appended after its last
    snapshot — and the last seq. Any damage is a Damaged naming the file, the line and the fix.
    """
    for sub in PAYLOAD_DIRS:  # a link would carry omg's writes out of the run directory
        where = rundir.path / sub
        if os.path.lexists(where) and (where.is_symlink() or not where.is_dir()):
            what = "a symbolic link" if where.is_symlink() else "a file"
            raise Damaged(
                where, None, f"is {what}, not a directory omg writes in",
                f"move it aside (omg deletes nothing) and resume, or {events_fix(rundir.path)}",
            )  # fmt: skip
    snapshot = None
    if os.path.lexists(rundir.state_path):  # absent: the first leg was killed before writing it
        snapshot = Snapshot(rundir.read_state(), rundir.state_path)
    point = read_point(rundir.path)
    since = None if point is None else point.seq
    state, last, reached = rundir.verified(snapshot, point)
    if snapshot is None and last == 0:
        raise Damaged(
            rundir.log_path, None, "holds no events and there is no state.json: the run's "
            "first leg was stopped before it recorded its start", f"remove {rundir.path} and "
            f"start the run again (`omg run GRAPH --run-id {rundir.run_id}`)",
        )  # fmt: skip
    if snapshot is None or state["seq"] != snapshot.state["seq"]:
        problem = shape_problem(state)
        if problem is not None:
            raise Damaged(
                rundir.log_path, None, f"folds to a state that is damaged: {problem}",
                events_fix(rundir.path),
            )  # fmt: skip
    damaged = artifacts.check(rundir.path, state, rundir.artifact, contents=contents)
    if damaged is not None:
        raise Damaged(damaged.path, None, damaged.problem, damaged.fix)
    rundir.point = reached
    rundir.snapshot_seq = -1 if snapshot is None else snapshot.state["seq"]
    # a fold of its own, not the point's, means the whole log was checked
    if point is None or reached.state is not point.state or reached.seq != since:
        with contextlib.suppress(OSError):  # (a directory omg may not write keeps its old one)
            atomic_write(rundir.path / VERIFIED, encoded(reached))  # the next look starts there
    return state, last


def fold_run(rundir: RunDir) -> State:
    """The fold of every event, each line checked — all of them, whatever point was verified
    before (for `omg replay`: state.json is on trial)."""
    return rundir.verified()[0]


def catch_up(rundir: RunDir, state: State) -> None:
    """Bring state.json level with the events (a leg killed between an event and its snapshot
    left it behind) — even when this resume then finds nothing to do, or refuses. After
    ``load_run`` (under the leg lock) state.json is as it read it, and is not read again."""
    seen = rundir.snapshot_seq
    if seen is None:
        try:
            seen = rundir.read_state()["seq"]
        except StateError:  # no snapshot yet: load_run folded the events
            seen = -1
    if seen != state["seq"]:
        rundir.write_state(state)
