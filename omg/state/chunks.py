"""The event log's chunks: events.jsonl, then events/<seq of its first line>.jsonl — listed in
order, appended to one line per write, and read back line by line, each line checked."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from omg import strictjson
from omg.errors import StateError
from omg.state.events import Event
from omg.state.fold import EVENT_SCHEMA
from omg.state.verify import NOTHING, Damaged, events_fix, torn

#: The event log's first file: a run's first ``CHUNK_EVENTS`` events (a run recorded before the
#: log was cut in chunks holds all of its earlier events here; it is never grown past that).
EVENTS = "events.jsonl"
#: The directory of the log's further chunks: ``events/<seq of its first line, 10 digits>.jsonl``.
CHUNKS = "events"
#: Lines a file of the log holds before the next chunk starts: a commit rewrites only the last
#: one, so what it writes is bounded whatever the length of the run's history.
CHUNK_EVENTS = 128
MAX_LINE = 1 << 20


class EventLog:
    """One run's event log, in the run directory ``path``; each file it writes is told to
    ``changed``."""

    def __init__(self, path: Path, changed: Callable[[Path], None]) -> None:
        self.path = path
        self.changed = changed
        self._events_fd: int | None = None
        self._chunk: tuple[Path, int] | None = None  # the file appended to, its lines
        #: the log's files as the record check listed them (None: not listed yet)
        self.listed: list[Path] | None = None

    @property
    def events_path(self) -> Path:
        return self.path / EVENTS

    @property
    def chunks_path(self) -> Path:
        return self.path / CHUNKS

    @property
    def log_path(self) -> Path:
        """Where the event log is: the single file of an older run, else the chunks' folder."""
        return self.events_path if os.path.lexists(self.events_path) else self.chunks_path

    def segments(self) -> list[Path]:
        """The files of the event log in order: the single log of an older run, if any, then
        the chunks by the seq of their first line. A name that is no chunk's is a Damaged."""
        found = [self.events_path] if os.path.lexists(self.events_path) else []
        if not os.path.lexists(self.chunks_path):
            return found
        where = self.chunks_path
        if where.is_symlink() or not where.is_dir():
            raise Damaged(where, None, "is not a directory of event chunks", events_fix(self.path))
        names = sorted(os.listdir(where))
        for name in names:
            if not _chunk_name(name):
                raise Damaged(
                    where / name, None, "is not an event chunk (named <first seq, 10 digits>"
                    ".jsonl); move it aside (omg deletes nothing)", events_fix(self.path),
                )  # fmt: skip
        return [*found, *(where / n for n in names)]

    def append_event(self, event: Event) -> Event:
        """Append one line (the event already masked) with a single write (no fsync: see
        ``RunDir.checkpoint``); the event as written (what the state must fold).

        A killed process loses nothing it wrote (the page cache outlives it), and one write
        per line keeps a concurrent reader from ever seeing half a line.
        """
        try:
            line = json.dumps(
                event, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
            )
        except ValueError:  # NaN or an infinity: no record holds one, so none is written
            raise StateError(
                f"a {event.get('event')} event would record {strictjson.unfit(event)} as a "
                "number past any bound (NaN or Infinity), which no record holds; nothing was "
                "written — an input it came from is damaged"
            ) from None
        data = (line + "\n").encode()
        if len(data) > MAX_LINE:  # never write a line read_events would refuse as damaged
            raise StateError(
                f"a {event.get('event')} event would take {len(data):,} bytes, more than the "
                f"{MAX_LINE:,} a line of events.jsonl (or a chunk of it) may hold; nothing was "
                "written"
            )
        if self._chunk is None or self._chunk[1] >= CHUNK_EVENTS:
            self._open_chunk(int(event["seq"]))
        assert self._events_fd is not None and self._chunk is not None
        os.write(self._events_fd, data)
        path, lines = self._chunk
        self._chunk = (path, lines + 1)
        self.changed(path)
        return event

    def chunk_path(self, first_seq: int) -> Path:
        return self.chunks_path / f"{first_seq:010d}.jsonl"

    def _open_chunk(self, seq: int) -> None:
        """Open the file event ``seq`` goes in: events.jsonl for a run's first
        ``CHUNK_EVENTS`` events, then chunks of as many lines named for their first seq. The
        last file is continued while it has room (a leg resuming a run), else a fresh chunk
        starts. The run's record was verified before a leg appends, so ``seq`` says how many
        lines each file holds."""
        if self._events_fd is not None:
            os.fsync(self._events_fd)  # a full chunk is never written again: durable once
            os.close(self._events_fd)
            self._events_fd = None
        if self._chunk is None:  # (the leg holds the lock: the files are as its check found them)
            last = (self.listed if self.listed is not None else self.segments())[-1:]
            start = 1 if not last or last[0] == self.events_path else _first_seq(last[0])
            target = self.chunk_path(start) if start > 1 else self.events_path
            if seq - start < CHUNK_EVENTS:
                self._chunk = (target, seq - start)
        if self._chunk is None or self._chunk[1] >= CHUNK_EVENTS:
            self._chunk = (self.chunk_path(seq), 0)
        path = self._chunk[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        self._events_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def read_events(self) -> Iterator[Event]:
        """Every event, in order; a torn, oversized or foreign line is a StateError."""
        segments = self._segments()
        for path in segments:
            with self._open_path(path, events_fix(self.path)) as fh:
                for n, raw in enumerate(iter(lambda: fh.readline(MAX_LINE + 1), b""), 1):
                    yield self._parse_line(raw, n, path)

    def checked_files(self) -> tuple[list[Path], Callable[[Path], BinaryIO]]:
        """The files of the log (none at all is a StateError), and how the check opens each."""
        fix = events_fix(self.path)
        self.listed = self._segments()
        return self.listed, lambda path: self._open_path(path, fix)

    def _segments(self) -> list[Path]:
        found = self.segments()
        if not found:
            fix = events_fix(self.path)
            raise StateError(f"{_missing(self.path, EVENTS)} {NOTHING}; {fix}")
        return found

    def _open_path(self, path: Path, fix: str) -> BinaryIO:
        return opened(self.path, path, fix)

    def parse_line(self, raw: bytes, n: int, path: Path) -> Event:
        """Line ``n`` of ``path``, one event; a torn, oversized or foreign line is a Damaged."""
        return self._parse_line(raw, n, path)

    def _parse_line(self, raw: bytes, n: int, path: Path) -> Event:
        if raw.endswith(b"\n") and len(raw) <= MAX_LINE:
            try:
                ev = strictjson.line(raw)
            except ValueError:
                ev = None
            sound = isinstance(ev, dict) and ev.get("schema") == EVENT_SCHEMA
            if sound and "seq" in ev and "event" in ev:
                return ev  # type: ignore[no-any-return]  # the hot path: one parse, 3 lookups
        return self._refuse_line(raw, n, path)

    def _refuse_line(self, raw: bytes, n: int, path: Path) -> Event:
        """The Damaged that says exactly how a line is damaged."""
        fix = events_fix(self.path)
        if len(raw) > MAX_LINE:
            raise Damaged(path, n, "is longer than 1 MiB; the event stream is damaged", fix)
        if not raw.endswith(b"\n"):
            raise torn(path, n)
        try:
            ev = strictjson.line(raw)
        except ValueError as exc:
            raise Damaged(path, n, f"is not a JSON event omg wrote ({exc})", fix) from None
        if not isinstance(ev, dict) or "seq" not in ev or "event" not in ev:
            raise Damaged(path, n, "is not an omg event (no seq/event fields)", fix)
        raise Damaged(
            path, n, f"has event schema {ev.get('schema')!r}, but this omg understands schema "
            f"{EVENT_SCHEMA}: it was written by a different omg version", "upgrade omg",
        )  # fmt: skip

    def sync(self) -> None:
        """Make what was appended durable (``RunDir.checkpoint``)."""
        if self._events_fd is not None:
            os.fsync(self._events_fd)

    def close(self) -> None:
        if self._events_fd is not None:
            os.close(self._events_fd)
            self._events_fd = None


def _chunk_name(name: str) -> bool:
    stem, _, ext = name.partition(".")
    return ext == "jsonl" and len(stem) == 10 and stem.isdigit() and int(stem) > 1


def _first_seq(path: Path) -> int:
    return int(path.name.split(".")[0])


def open_record(path: Path, fix: str) -> BinaryIO:
    """``path`` opened for reading when it is a regular file (FileNotFoundError when absent).

    A directory, a symbolic link, a pipe or a device in its place is a Damaged: never followed
    out of the run directory, never read, never waited on.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        what = "a symbolic link" if path.is_symlink() else f"unreadable ({exc.strerror})"
        raise Damaged(path, None, f"is {what}, not a file omg reads", fix) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a pipe or device)"
        raise Damaged(path, None, f"is {what}; move it aside (omg deletes nothing)", fix)
    return os.fdopen(fd, "rb")


def opened(run_dir: Path, path: Path, fix: str) -> BinaryIO:
    """``path``, a file of the run directory ``run_dir``, opened (``open_record``); a StateError
    when it is absent."""
    try:
        return open_record(path, fix)
    except FileNotFoundError:
        raise StateError(f"{_missing(run_dir, path.name)} {NOTHING}; {fix}") from None


def _missing(run_dir: Path, name: str) -> str:
    return f"run {run_dir.name!r} has no {name} in {run_dir}; is this a run directory?"
