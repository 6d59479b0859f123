"""The run directory: state.json, events.jsonl, payloads and the leg lock, written safely;
and which process holds a leg (``Process``, ``alive``)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

from omg import strictjson
from omg.errors import StateError
from omg.fastschema import Check, compile_schema
from omg.mask import NOTHING as UNMASKED
from omg.mask import Masker
from omg.nodefile import on_disk
from omg.records import State
from omg.state import artifacts
from omg.state.events import Event
from omg.state.fold import EVENT_SCHEMA, STATE_SCHEMA
from omg.state.verify import NOTHING, Damaged, Snapshot, events_fix, state_fix, torn, verify

STATE = "state.json"
#: The event log's first file: a run's first ``CHUNK_EVENTS`` events (a run recorded before the
#: log was cut in chunks holds all of its earlier events here; it is never grown past that).
EVENTS = "events.jsonl"
#: The directory of the log's further chunks: ``events/<seq of its first line, 10 digits>.jsonl``.
CHUNKS = "events"
#: Lines a file of the log holds before the next chunk starts: a commit rewrites only the last
#: one, so what it writes is bounded whatever the length of the run's history.
CHUNK_EVENTS = 128
LOCK = "leg.lock"
MAX_LINE = 1 << 20
#: The directories a leg writes payloads into (outputs, failures, feedback, transcripts).
PAYLOAD_DIRS = ("artifacts", "failed", "feedback", "sessions")
LockProbe = Literal["free", "held"]


_COMPACT = {
    "sort_keys": True, "ensure_ascii": False, "separators": (", ", ": "), "allow_nan": False,
}  # fmt: skip
#: Top-level maps written one entry per line, so a state diff shows one line per changed node.
_LINE_PER_ENTRY = ("nodes", "gates", "worktrees")


def _compact(value: Any) -> str:
    return json.dumps(value, **_COMPACT)  # type: ignore[arg-type]


def canonical_json(
    value: Any, encoder: SnapshotEncoder | None = None, touched: frozenset[str] | None = None
) -> str:
    """One byte form per value: sorted keys, UTF-8, a trailing newline.

    A top-level object puts each key on its own line, and each entry of ``nodes``, ``gates``
    and ``worktrees`` on its own line, compact within — readable in a git diff, and encoded
    by the C encoder (an indented dump is ~10x slower on a large run). With an ``encoder``,
    only the ``touched`` node records (and small fields) are re-encoded; None means all.
    """
    if not isinstance(value, dict):
        return _compact(value) + "\n"
    cache = encoder.cache if encoder is not None else {}
    lines = []
    for key in sorted(value):
        v = value[key]
        if key in _LINE_PER_ENTRY and isinstance(v, dict) and v:
            parts = []
            for k in sorted(v):
                ck = f"{key}\0{k}"
                text = (
                    cache.get(ck)
                    if key == "nodes" and touched is not None and k not in touched
                    else None
                )
                if text is None:
                    text = cache[ck] = f"    {json.dumps(k)}: {_compact(v[k])}"
                parts.append(text)
            lines.append(f"  {json.dumps(key)}: {{\n" + ",\n".join(parts) + "\n  }")
        elif key == "graph":
            text = cache.get("graph") if touched is not None else None
            if text is None:
                text = cache["graph"] = _compact(v)
            lines.append(f'  "graph": {text}')
        else:
            lines.append(f"  {json.dumps(key)}: {_compact(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


class SnapshotEncoder:
    """Remembers encoded node records and the graph between writes of one leg's state.json."""

    def __init__(self) -> None:
        self.cache: dict[str, str] = {}


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via temp file + rename.

    The rename makes every write atomic: a reader (or a leg killed at any point) sees the old
    file or the new one, never a mix. Durability is the checkpoint's job (``RunDir.checkpoint``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


@cache
def _state_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / "state.schema.json").read_text("utf-8"))
    return schema


@cache
def _state_is_valid() -> Check:
    return compile_schema(_state_schema())


def _shape_problem(st: State) -> str | None:
    """The first way ``st`` breaks schemas/state.schema.json (None when it does not).

    The compiled check answers a sound snapshot; jsonschema is imported only to explain damage.
    """
    if _state_is_valid()(st):
        return None
    import jsonschema

    validator = jsonschema.Draft202012Validator(_state_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(st))
    if error is None:
        return None
    path = [str(p) for p in error.absolute_path]
    owner = f" of node {path[1]!r}" if path[:1] == ["nodes"] and len(path) > 1 else ""
    field = path[2:] if owner else path
    if error.validator == "required":
        missing = str(error.message).split("'")[1]
        return f"field {'.'.join([*field, missing])!r}{owner} is missing"
    return f"field {'.'.join(field) or '(top level)'!r}{owner} is wrong: {error.message}"


@dataclass(frozen=True)
class Process:
    """A process as a later one can recognise it: on which machine, which pid, since when."""

    host: str  # the host name, for people
    machine: str  # host name, boot and pid namespace: pids compare only when this matches
    pid: int
    started: int  # its start time in clock ticks since boot, so a reused pid is not taken for it


@cache
def machine_key() -> str:
    """This machine as its pids see it: host name, boot id and pid namespace, hashed."""
    parts = [socket.gethostname()]
    try:
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip())
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    except OSError:
        pass
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _started(pid: int) -> int | None:
    """A live process's start time (clock ticks since boot); 0 without /proc; None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        return 0
    fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) ": state is field 3
    if not fields or fields[0] == b"Z":  # a zombie has ended; only its exit status is left
        return None
    return int(fields[19]) if len(fields) > 19 else 0


def this_process() -> Process:
    """The calling process, as ``alive`` recognises it later."""
    pid = os.getpid()
    return Process(socket.gethostname(), machine_key(), pid, _started(pid) or 0)


def alive(proc: Process) -> bool | None:
    """Whether ``proc`` still runs; None when it ran on another machine (no way to tell)."""
    if proc.machine != machine_key():
        return None
    if not Path("/proc").is_dir():
        try:
            os.kill(proc.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    started = _started(proc.pid)
    return started is not None and (started == proc.started or not proc.started)


class RunDir:
    """One run's directory under ``<runs-dir>/<run-id>/``.

    ``mask`` is the leg's masker: every event, payload and transcript is masked on its way in
    (state.json is the fold of masked events). Reading needs none.
    """

    def __init__(self, path: Path, mask: Masker = UNMASKED) -> None:
        self.path = path
        self.mask = mask
        self._events_fd: int | None = None
        self._chunk: tuple[Path, int] | None = None  # the file appended to, its lines
        self._lock_fd: int | None = None
        self._encoder = SnapshotEncoder()
        #: paths (relative, "/"-separated) written or removed since ``take_changes``
        self._changed: set[str] = set()
        self._changes_lock = threading.Lock()

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def state_path(self) -> Path:
        return self.path / STATE

    @property
    def events_path(self) -> Path:
        return self.path / EVENTS

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
        return self.path / CHUNKS

    @property
    def log_path(self) -> Path:
        """Where the event log is: the single file of an older run, else the chunks' folder."""
        return self.events_path if os.path.lexists(self.events_path) else self.chunks_path

    def exists(self) -> bool:
        return self.state_path.exists() or self.events_path.exists() or self.chunks_path.exists()

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
        if self._events_fd is not None:
            os.close(self._events_fd)
            self._events_fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    # -- events ---------------------------------------------------------------
    def append_event(self, event: Event) -> Event:
        """Append one line, masked, with a single write (no fsync: see ``checkpoint``); the
        event as written (what the state must fold).

        A killed process loses nothing it wrote (the page cache outlives it), and one write
        per line keeps a concurrent reader from ever seeing half a line.
        """
        event = self.mask.record(event)
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
        if self._chunk is None:
            last = self.segments()[-1:]
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

    def verified(self, snapshot: Snapshot | None = None) -> tuple[State, int]:
        """The fold of every event and the last seq, each line checked in one streaming pass
        and ``snapshot`` compared with the fold at its seq (``state.verify``)."""
        fix = events_fix(self.path)
        return verify(
            self._segments(), snapshot, max_line=MAX_LINE,
            opener=lambda path: self._open_path(path, fix),
        )  # fmt: skip

    def _segments(self) -> list[Path]:
        found = self.segments()
        if not found:
            fix = events_fix(self.path)
            raise StateError(f"{self._missing(EVENTS)} {NOTHING}; {fix}")
        return found

    def _open(self, name: str, fix: str) -> BinaryIO:
        return self._open_path(self.path / name, fix)

    def _open_path(self, path: Path, fix: str) -> BinaryIO:
        try:
            return open_record(path, fix)
        except FileNotFoundError:
            raise StateError(f"{self._missing(path.name)} {NOTHING}; {fix}") from None

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

    def _missing(self, name: str) -> str:
        return f"run {self.run_id!r} has no {name} in {self.path}; is this a run directory?"

    # -- state ----------------------------------------------------------------
    def read_state(self) -> State:
        """The snapshot, checked for shape and schema version; damage is a clear StateError."""
        fix = state_fix(self.path)
        with self._open(STATE, fix) as fh:
            data = fh.read()
        try:
            st = strictjson.loads(data)
        except UnicodeDecodeError as exc:
            at = data.count(b"\n", 0, exc.start) + 1
            raise Damaged(self.state_path, at, "is not valid JSON (not UTF-8 text)", fix) from None
        except json.JSONDecodeError as exc:
            raise Damaged(
                self.state_path, exc.lineno, f"is not valid JSON ({exc.msg}): the snapshot is "
                "damaged", fix,
            ) from None  # fmt: skip
        except ValueError as exc:  # NaN, Infinity, a number past its range, nested too deep
            raise Damaged(self.state_path, None, f"is not a state omg wrote: {exc}", fix) from None
        if not isinstance(st, dict) or "nodes" not in st:
            raise Damaged(self.state_path, None, "is not an omg state file (no nodes)", fix)
        if st.get("schema") != STATE_SCHEMA:
            raise Damaged(
                self.state_path, None, f"has state schema {st.get('schema')!r}, but this omg "
                f"understands schema {STATE_SCHEMA}: it was written by a different omg version",
                f"upgrade omg if another version wrote it; else {fix}",
            )  # fmt: skip
        problem = _shape_problem(cast(State, st))
        if problem is not None:
            raise Damaged(self.state_path, None, f"is damaged: {problem}", fix)
        return cast(State, st)

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
        if self._events_fd is not None:
            os.fsync(self._events_fd)
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
    state, last = rundir.verified(snapshot)
    if snapshot is None and last == 0:
        raise Damaged(
            rundir.log_path, None, "holds no events and there is no state.json: the run's "
            "first leg was stopped before it recorded its start", f"remove {rundir.path} and "
            f"start the run again (`omg run GRAPH --run-id {rundir.run_id}`)",
        )  # fmt: skip
    if snapshot is None or state["seq"] != snapshot.state["seq"]:
        problem = _shape_problem(state)
        if problem is not None:
            raise Damaged(
                rundir.log_path, None, f"folds to a state that is damaged: {problem}",
                events_fix(rundir.path),
            )  # fmt: skip
    damaged = artifacts.check(rundir.path, state, rundir.artifact, contents=contents)
    if damaged is not None:
        raise Damaged(damaged.path, None, damaged.problem, damaged.fix)
    return state, last


def fold_run(rundir: RunDir) -> State:
    """The fold of every event, each line checked (for `omg replay`: state.json is on trial)."""
    return rundir.verified()[0]


def catch_up(rundir: RunDir, state: State) -> None:
    """Bring state.json level with the events (a leg killed between an event and its snapshot
    left it behind) — even when this resume then finds nothing to do, or refuses."""
    try:
        behind = rundir.read_state()["seq"] != state["seq"]
    except StateError:  # no snapshot yet: load_run folded the events
        behind = True
    if behind:
        rundir.write_state(state)
