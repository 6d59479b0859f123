"""The run directory: state.json, events.jsonl, payloads and the leg lock, written safely;
and which process holds a leg (``Process``, ``alive``)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast

from omg.errors import StateError
from omg.fastschema import Check, compile_schema
from omg.state.fold import EVENT_SCHEMA, STATE_SCHEMA, apply, fold
from omg.state.records import State

STATE = "state.json"
EVENTS = "events.jsonl"
LOCK = "leg.lock"
MAX_LINE = 1 << 20
LockProbe = Literal["free", "held"]


_COMPACT = {"sort_keys": True, "ensure_ascii": False, "separators": (", ", ": ")}
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


def _shape_problem(st: dict[str, Any]) -> str | None:
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
    """One run's directory under ``<runs-dir>/<run-id>/``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._events_fd: int | None = None
        self._lock_fd: int | None = None
        self._encoder = SnapshotEncoder()

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
        return self.path / "artifacts" / f"{node_id}.out"

    def failed(self, node_id: str) -> Path:
        return self.path / "failed" / f"{node_id}.out"

    def feedback(self, node_id: str) -> Path:
        return self.path / "feedback" / f"{node_id}.out"

    def session(self, session_id: str) -> Path:
        """An agent session's transcript, kept with the run so a fresh machine can resume it."""
        return self.path / "sessions" / f"{session_id}.jsonl"

    def exists(self) -> bool:
        return self.state_path.exists() or self.events_path.exists()

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
    def append_event(self, event: dict[str, Any]) -> None:
        """Append one line with a single write (no fsync: see ``checkpoint``).

        A killed process loses nothing it wrote (the page cache outlives it), and one write
        per line keeps a concurrent reader from ever seeing half a line.
        """
        if self._events_fd is None:
            self.path.mkdir(parents=True, exist_ok=True)
            self._events_fd = os.open(
                self.events_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
            )
        line = json.dumps(event, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        os.write(self._events_fd, line.encode())

    def read_events(self) -> Iterator[dict[str, Any]]:
        """Every event, in file order; a torn, oversized or foreign line is a StateError."""
        try:
            fh = self.events_path.open("rb")
        except FileNotFoundError:
            raise StateError(self._missing(EVENTS)) from None
        with fh:
            for n, raw in enumerate(fh, 1):
                yield self._parse_line(raw, n)

    def events_after(self, seq: int) -> list[dict[str, Any]]:
        """Events with ``seq`` greater than ``seq``, reading backwards from the end of the file."""
        try:
            size = self.events_path.stat().st_size
        except FileNotFoundError:
            raise StateError(self._missing(EVENTS)) from None
        if size and not self._ends_with_newline(size):
            raise StateError(self._torn())
        out: list[dict[str, Any]] = []
        with self.events_path.open("rb") as fh:
            pos, buf = size, b""
            while pos > 0:
                step = min(65536, pos)
                pos -= step
                fh.seek(pos)
                buf = fh.read(step) + buf
                lines = buf.split(b"\n")
                buf = lines[0] if pos > 0 else b""
                body = lines[1:] if pos > 0 else lines
                for raw in reversed(body):
                    if not raw:
                        continue
                    ev = self._parse_line(raw + b"\n", None)
                    if ev["seq"] <= seq:
                        if not out and ev["seq"] < seq:  # the file's last event predates state
                            raise StateError(self._behind(ev["seq"], seq))
                        return list(reversed(out))
                    out.append(ev)
                if len(buf) > MAX_LINE:
                    raise StateError(f"{self.events_path} has a line longer than 1 MiB; damaged")
        if seq > 0:  # the whole file is after the snapshot's event, or empty: lines were lost
            raise StateError(self._behind(out[-1]["seq"] - 1 if out else 0, seq))
        return list(reversed(out))

    def _behind(self, have: int, seq: int) -> str:
        return (
            f"{self.events_path} does not hold event {seq}, which {STATE} was folded up to "
            f"(the stream stops at or skips from seq {have}): events were lost, e.g. the file was "
            "truncated or replaced. omg did not touch either file; restore events.jsonl from "
            "the run branch"
        )

    def _ends_with_newline(self, size: int) -> bool:
        with self.events_path.open("rb") as fh:
            fh.seek(size - 1)
            return fh.read(1) == b"\n"

    def _parse_line(self, raw: bytes, n: int | None) -> dict[str, Any]:
        if raw.endswith(b"\n") and len(raw) <= MAX_LINE:
            try:
                ev = json.loads(raw)
            except ValueError:
                ev = None
            sound = isinstance(ev, dict) and ev.get("schema") == EVENT_SCHEMA
            if sound and "seq" in ev and "event" in ev:
                return ev  # type: ignore[no-any-return]  # the hot path: one parse, 3 lookups
        return self._refuse_line(raw, n)

    def _refuse_line(self, raw: bytes, n: int | None) -> dict[str, Any]:
        """The StateError that says exactly how a line is damaged."""
        where = f"{self.events_path}" + (f" line {n}" if n else "")
        if not raw.endswith(b"\n"):
            raise StateError(self._torn())
        if len(raw) > MAX_LINE:
            raise StateError(f"{where} is longer than 1 MiB; the event stream is damaged")
        try:
            ev = json.loads(raw)
        except ValueError:
            raise StateError(
                f"{where} is not a JSON event; the event stream is damaged. omg did not touch it: "
                "inspect the file (a line written by hand?) and restore it from the run branch"
            ) from None
        if not isinstance(ev, dict) or "seq" not in ev or "event" not in ev:
            raise StateError(f"{where} is not an omg event (no seq/event fields)")
        raise StateError(
            f"{where} has event schema {ev.get('schema')!r}, but this omg understands "
            f"schema {EVENT_SCHEMA}; it was written by a different omg version — upgrade omg"
        )

    def _torn(self) -> str:
        return (
            f"{self.events_path} ends with a torn (unterminated) line: the event stream was cut "
            "mid-write. omg will not append to or rewrite it; restore the file from the run branch "
            "(`omg resume --fetch`), or remove the partial last line by hand after inspecting it"
        )

    def _missing(self, name: str) -> str:
        return f"run {self.run_id!r} has no {name} in {self.path}; is this a run directory?"

    # -- state ----------------------------------------------------------------
    def read_state(self) -> State:
        """The snapshot, checked for shape and schema version; damage is a clear StateError."""
        try:
            data = self.state_path.read_bytes()
        except FileNotFoundError:
            raise StateError(self._missing(STATE)) from None
        try:
            st = json.loads(data)  # bytes that are not UTF-8 fail here too, as a ValueError
        except ValueError as exc:
            raise StateError(
                f"{self.state_path} is not valid JSON ({exc}); the snapshot is damaged. "
                f"omg did not overwrite it: rebuild it with `omg replay {self.run_id} --write` "
                "or restore it from the run branch"
            ) from None
        if not isinstance(st, dict) or "nodes" not in st:
            raise StateError(f"{self.state_path} is not an omg state file (no nodes)")
        if st.get("schema") != STATE_SCHEMA:
            raise StateError(
                f"{self.state_path} has state schema {st.get('schema')!r}, "
                f"but this omg understands schema {STATE_SCHEMA}; "
                "it was written by a different omg version — upgrade omg"
            )
        problem = _shape_problem(st)
        if problem is not None:
            raise StateError(
                f"{self.state_path} is damaged: {problem}. omg did not overwrite it: rebuild it "
                f"with `omg replay {self.run_id} --write` or restore it from the run branch"
            )
        return cast(State, st)

    def write_state(self, state: State, touched: frozenset[str] | None = None) -> None:
        """Rewrite state.json atomically; ``touched`` names the records that changed."""
        atomic_write(self.state_path, canonical_json(state, self._encoder, touched))

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
        for path in (self.state_path, self.path):
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def write_payload(self, path: Path, text: str) -> None:
        """Artifacts and payloads, written before the event that makes them count.

        Not atomic and not fsync'd on purpose: a payload is only read after its node's
        event is recorded, and a leg killed before that event re-runs the node, rewriting it.
        """
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def load_run(rundir: RunDir) -> tuple[State, int]:
    """The snapshot plus the tail of events it had not folded yet (a leg killed mid-write)."""
    if not rundir.state_path.exists() and rundir.events_path.exists():
        # The first leg was killed between its first event and its first snapshot.
        evs = list(rundir.read_events())
        return fold(evs), max([0, *(ev["seq"] for ev in evs)])
    state = rundir.read_state()
    tail = rundir.events_after(state["seq"])
    for ev in tail:
        apply(state, ev)
    last = max([state["seq"], *(ev["seq"] for ev in tail)])
    return state, last


def catch_up(rundir: RunDir, state: State) -> None:
    """Bring state.json level with the events (a leg killed between an event and its snapshot
    left it behind) — even when this resume then finds nothing to do, or refuses."""
    try:
        behind = rundir.read_state()["seq"] != state["seq"]
    except StateError:  # no snapshot yet: load_run folded the events
        behind = True
    if behind:
        rundir.write_state(state)
