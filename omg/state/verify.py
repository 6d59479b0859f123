"""The record check: every line of events.jsonl verified and folded in one streaming pass, and
state.json compared with that fold at its seq, so a damaged record is refused before it is used.

Each line must be one JSON object under 1 MiB, of this omg's event schema, numbered ``seq`` =
its line number (a gap, a duplicate or a swap shows at once), of this run (``run_id`` is the
directory's name), in its leg (``run_started`` opens leg k+1, every other event is of leg k),
of a known kind (node events name their node), and taken in by the fold without complaint.
Lines the snapshot vouches for are also checked by the equality of state.json with their fold;
lines past it (a killed leg's tail, or every line when there is no snapshot) are checked against
the event schema too. A torn last line (a power loss mid-write) is refused as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

from omg import strictjson
from omg.errors import StateError
from omg.fastschema import Check, compile_schema
from omg.records import State
from omg.state.events import EVENT_KINDS
from omg.state.fold import EVENT_SCHEMA, apply, empty_state

#: Bytes read at a time: the pass streams, whatever the size of the history.
CHUNK = 1 << 20
NOTHING = "omg ran nothing and changed nothing"
_KINDS = frozenset(EVENT_KINDS)
_NODE_KINDS = frozenset(
    {
        "node_started", "node_retried", "node_passed", "node_failed",
        "gate_paused", "gate_approved", "gate_rejected",
    }
)  # fmt: skip
#: What the (pure) fold raises on an event whose fields are not what its kind promises.
_FOLD_ERRORS = (LookupError, TypeError, ValueError, AttributeError, RecursionError, ArithmeticError)
_SCAN = strictjson.scan_line
_EVENT_SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schemas" / "event.schema.json"


class Damaged(StateError):
    """A run's record is damaged: the file, its line (None: the file as a whole), what is
    wrong and the fix. Raised before anything ran or was written."""

    def __init__(self, path: Path, line: int | None, problem: str, fix: str) -> None:
        where = f"{path} line {line}" if line is not None else str(path)
        super().__init__(f"{where} {problem}. {NOTHING}; {fix}")
        self.path, self.line, self.problem, self.fix = path, line, problem, fix

    @property
    def where(self) -> str:
        """The file's name (an artifact's with its directory) and line, for a one-line listing."""
        name = self.path.name
        if self.path.parent.name == "artifacts":
            name = f"artifacts/{name}"
        return name + (f" line {self.line}" if self.line is not None else "")


def events_fix(run_dir: Path) -> str:
    return (
        f"restore the run from its run branch (move {run_dir} aside, then "
        f"`omg resume --fetch REMOTE {run_dir.name}`), or start a fresh run (`omg run GRAPH`)"
    )


def state_fix(run_dir: Path) -> str:
    return (
        f"rebuild it from the events with `omg replay {run_dir.name} --write`, restore it from "
        "the run branch, or start a fresh run (`omg run GRAPH`)"
    )


def torn(path: Path, line: int) -> Damaged:
    """A torn last line: a power loss mid-write (a killed process never leaves one)."""
    return Damaged(
        path, line, "is torn (unterminated): the event stream was cut mid-write",
        "omg will not append to it: remove the partial last line by hand after inspecting it, "
        f"or {events_fix(run_dir_of(path))}",
    )  # fmt: skip


@dataclass(frozen=True)
class Snapshot:
    """state.json as read (its shape and schema version already checked), and its path."""

    state: State
    path: Path


def verify(
    segments: Sequence[Path],
    snapshot: Snapshot | None = None,
    *,
    max_line: int,
    opener: Callable[[Path], BinaryIO] | None = None,
) -> tuple[State, int]:
    """The fold of every event in the files ``segments`` (the event log, in order: an older
    run's single log, then its chunks) and the last seq, each line checked as it is folded and
    ``snapshot`` compared with the fold at its seq; a Damaged naming the file and its line
    otherwise. Seq runs on across the files: a chunk named for its first seq must begin there,
    so a chunk lost, swapped or repeated shows at its first line. The run is the one the
    files' run directory names."""
    walk = whole(segments, snapshot, max_line, opener or _open)
    return walk.st, walk.n


def whole(
    segments: Sequence[Path], snapshot: Snapshot | None, max_line: int,
    opener: Callable[[Path], BinaryIO],
) -> Walk:  # fmt: skip
    """The check of every line (``verify``), as the walk that made it."""
    run_dir = run_dir_of(segments[0])
    run_id = run_dir.name
    st = empty_state()
    snap_seq = -1 if snapshot is None else snapshot.state["seq"]
    if snapshot is not None:
        same_run(snapshot, run_id)
        if snap_seq == 0:
            compare(st, snapshot, segments[0], 0, 0)
    tail = max(snap_seq, 0)  # lines after this one are checked against the event schema
    walk = Walk(run_id, st, snapshot, snap_seq, tail, max_line)
    for i in range(len(segments)):
        walk_file(walk, segments, i, opener)
    reached(walk, segments, snapshot)
    return walk


def walk_file(
    walk: Walk, segments: Sequence[Path], i: int, opener: Callable[[Path], BinaryIO]
) -> None:
    """Walk on through ``segments[i]``, which must begin at the seq after the walk's last."""
    path = segments[i]
    first = _first_seq(path)
    if first is not None and first != walk.n + 1:
        _chunk_starts(path, first, walk.n)
    with opener(path) as fh:
        walk.segment(fh, path, empty_ok=i == len(segments) - 1)


def reached(walk: Walk, segments: Sequence[Path], snapshot: Snapshot | None) -> None:
    """The end of a check: the snapshot must not be past the log."""
    if snapshot is not None and snapshot.state["seq"] > walk.n:
        raise Damaged(
            segments[-1], None, f"does not hold event {snapshot.state['seq']}, which "
            f"{snapshot.path.name} was folded up to (the stream stops at seq {walk.n}): events "
            "were lost, e.g. a file was truncated, removed or replaced",
            events_fix(run_dir_of(segments[0])),
        )  # fmt: skip


def log_name(path: Path, run_dir: Path) -> str:
    """A file of the log by its name in the run directory (``events/<seq>.jsonl``)."""
    return f"{path.parent.name}/{path.name}" if path.parent != run_dir else path.name


def _open(path: Path) -> BinaryIO:
    return path.open("rb")


def run_dir_of(path: Path) -> Path:
    """The run directory a file of the event log lives in (a chunk one level deeper)."""
    return path.parent.parent if _first_seq(path) is not None else path.parent


def _first_seq(path: Path) -> int | None:
    """The seq a chunk's name says its first line holds (None: the single log of older runs)."""
    stem = path.name.split(".")[0]
    return int(stem) if path.parent.name == "events" and stem.isdigit() else None


def _chunk_starts(path: Path, first: int, before: int) -> None:
    if first > before + 1:
        one = first == before + 2
        missing = f"event {before + 1} is" if one else f"events {before + 1}-{first - 1} are"
        why = f"{missing} missing: a chunk of the event log was lost"
    else:
        why = "it overlaps the file before it: a chunk repeated or put in by hand"
    raise Damaged(
        path, None, f"is named for seq {first}, but the log before it ends at seq {before}: "
        f"{why}", events_fix(run_dir_of(path)),
    )  # fmt: skip


class Walk:
    """The streaming check, carried from one file of the event log to the next."""

    def __init__(
        self, run_id: str, st: State, snapshot: Snapshot | None, snap_seq: int, tail: int,
        max_line: int,
    ) -> None:  # fmt: skip
        self.run_id, self.st, self.snapshot = run_id, st, snapshot
        self.snap_seq, self.tail, self.max_line = snap_seq, tail, max_line
        self.n = self.legs = 0
        self.digest = hashlib.sha256()  # of every byte walked, in order
        self.files: list[tuple[str, int, int]] = []  # each file walked: name, size, lines

    def segment(
        self, events: BinaryIO, path: Path, *, empty_ok: bool, lines: int = 0, size: int = 0
    ) -> None:
        """Check and fold the lines of ``events`` (``path``), read on from its ``size``th byte,
        its ``lines``th line."""
        run_id, st, snapshot, snap_seq, tail = (
            self.run_id, self.st, self.snapshot, self.snap_seq, self.tail)  # fmt: skip
        max_line = self.max_line
        scan, kinds, nodes, schema = _SCAN, _KINDS, _NODE_KINDS, EVENT_SCHEMA
        n, legs = self.n, self.legs
        base = n - lines  # line k of this file holds seq base + k
        fix = events_fix(run_dir_of(path))
        carry = b""
        update = self.digest.update
        while chunk := events.read(CHUNK):
            update(chunk)
            size += len(chunk)
            buf = carry + chunk if carry else chunk
            cut = buf.rfind(b"\n") + 1
            carry = buf[cut:]
            text, garbled = _decode(buf, cut, path, n - base)
            pos, stop = 0, len(text)
            while pos < stop:
                nl = text.index("\n", pos)
                n += 1
                line = n - base
                if (nl - pos) * 4 >= max_line and len(text[pos : nl + 1].encode()) > max_line:
                    _too_long(path, line)
                try:
                    ev, end = scan(text, pos)
                except (StopIteration, ValueError, RecursionError):
                    ev, end = None, -1
                if end != nl or type(ev) is not dict:
                    ev = _lenient(text[pos:nl], path, line)
                pos = nl + 1
                get = ev.get
                if get("seq") != n or get("run_id") != run_id or get("schema") != schema:
                    _envelope(ev, path, line, n, run_id)
                kind = get("event")
                if kind == "node_started":  # half of a history; the fold takes nothing from it
                    if get("leg") != legs or not legs or type(get("node_id")) is not str:
                        _node(ev, path, line, legs)
                    if n > tail and not _event_check()(ev):
                        _off_schema(ev, path, line)
                else:
                    if type(get("ts")) is not str or type(get("seq")) is not int:
                        _envelope(ev, path, line, n, run_id)
                    leg = get("leg")
                    if kind == "run_started":
                        legs += 1
                        if leg != legs or type(leg) is not int:
                            _leg(ev, path, line, legs - 1)
                    elif leg != legs or not legs:
                        _leg(ev, path, line, legs)
                    if kind in nodes:
                        if type(get("node_id")) is not str:
                            _node(ev, path, line, legs)
                    elif kind not in kinds:
                        raise Damaged(
                            path, line, f"has event kind {kind!r}, which omg does not know", fix
                        )
                    if n > tail and not _event_check()(ev):
                        _off_schema(ev, path, line)
                    try:
                        apply(st, ev)
                    except _FOLD_ERRORS as exc:
                        if not _event_check()(ev):
                            _off_schema(ev, path, line)  # names the field
                        raise Damaged(
                            path, line, f"is a {kind} the fold cannot take in "
                            f"({type(exc).__name__}: {exc})", fix,
                        ) from None  # fmt: skip
                if n == snap_seq and snapshot is not None:
                    compare(st, snapshot, path, line, n)
            if garbled is not None:
                raise garbled
            if len(carry) > max_line:
                _too_long(path, n - base + 1)
        if carry:
            raise torn(path, n - base + 1)
        if n == base and not empty_ok:
            raise Damaged(path, None, "holds no events, yet a file of the log follows it", fix)
        self.n, self.legs = n, legs
        self.files.append((log_name(path, run_dir_of(path)), size, n - base))


@cache
def _event_check() -> Check:
    return compile_schema(json.loads(_EVENT_SCHEMA_PATH.read_text("utf-8")))


def _decode(buf: bytes, cut: int, path: Path, before: int) -> tuple[str, Damaged | None]:
    """The complete lines of ``buf`` (its first ``cut`` bytes) as text; when a line is not
    UTF-8, the lines before it and the Damaged to raise once they are checked."""
    try:
        return buf[:cut].decode(), None
    except UnicodeDecodeError as exc:
        start = buf.rfind(b"\n", 0, exc.start) + 1
        line = before + buf.count(b"\n", 0, start) + 1
        bad = Damaged(path, line, "is not UTF-8 text (garbled bytes)", events_fix(run_dir_of(path)))
        return buf[:start].decode(), bad


def _too_long(path: Path, line: int) -> None:
    raise Damaged(
        path, line, "is longer than 1 MiB (no event is): the event stream is damaged",
        events_fix(run_dir_of(path)),
    )  # fmt: skip


def _lenient(line: str, path: Path, n: int) -> dict[str, Any]:
    """A line the fast scan refused: the lenient parse (JSON allows spaces around a value),
    else a Damaged saying why it is not an event."""
    try:
        ev = strictjson.line(line)
    except json.JSONDecodeError:
        raise Damaged(
            path, n, "is not a JSON event: garbled, truncated, or written by hand",
            events_fix(run_dir_of(path)),
        ) from None  # fmt: skip
    except ValueError as exc:  # NaN, Infinity, a number past its range, nested too deep
        raise Damaged(
            path, n, f"is not a JSON event omg wrote: {exc}", events_fix(run_dir_of(path))
        ) from None
    if not isinstance(ev, dict) or "seq" not in ev or "event" not in ev:
        fix = events_fix(run_dir_of(path))
        raise Damaged(path, n, "is not an omg event (no seq/event fields)", fix)
    return ev


def _envelope(ev: Mapping[str, object], path: Path, line: int, n: int, run_id: str) -> None:
    """Why the envelope of ``line`` (which must hold seq ``n``) is wrong: the first field
    that says so."""
    fix = events_fix(run_dir_of(path))
    if "seq" not in ev or "event" not in ev:
        raise Damaged(path, line, "is not an omg event (no seq/event fields)", fix)
    if ev.get("schema") != EVENT_SCHEMA:
        raise Damaged(
            path, line, f"has event schema {ev.get('schema')!r}, but this omg understands schema "
            f"{EVENT_SCHEMA}: it was written by a different omg version (or edited)",
            f"upgrade omg if another version wrote it; else {fix}",
        )  # fmt: skip
    seq = ev["seq"]
    if type(seq) is not int:
        raise Damaged(path, line, f"has seq {seq!r}, not a whole number", fix)
    if seq < n:
        why = f"event {seq} is repeated, or the lines are out of order"
    elif seq > n:
        missing = f"event {n} is" if seq == n + 1 else f"events {n}-{seq - 1} are"
        why = f"{missing} missing, or the lines are out of order"
    else:
        why = ""
    if why:
        raise Damaged(path, line, f"has seq {seq} where seq {n} belongs: {why}", fix)
    if ev.get("run_id") != run_id:
        raise Damaged(
            path, line, f"belongs to run {ev.get('run_id')!r}, not {run_id!r} (its "
            "directory): a line, or the whole file, from another run", fix,
        )  # fmt: skip
    raise Damaged(path, line, f"has no time (ts is {ev.get('ts')!r})", fix)


def _leg(ev: Mapping[str, object], path: Path, n: int, before: int) -> None:
    kind, leg = ev.get("event"), ev.get("leg")
    if kind == "run_started":
        problem = f"starts leg {leg!r} after leg {before}: legs are numbered 1, 2, 3… in order"
    elif before == 0:
        problem = f"is a {kind}, but a run's record opens with run_started"
    else:
        problem = f"is a {kind} of leg {leg!r}, but it follows the run_started of leg {before}"
    raise Damaged(path, n, problem, events_fix(run_dir_of(path)))


def _node(ev: Mapping[str, object], path: Path, n: int, legs: int) -> None:
    if ev.get("leg") != legs or not legs:
        _leg(ev, path, n, legs)
    raise Damaged(
        path, n, f"is a {ev.get('event')} without a node_id", events_fix(run_dir_of(path))
    )


def _off_schema(ev: Mapping[str, object], path: Path, n: int) -> None:
    import jsonschema  # only to say why: the compiled check answered "not valid"

    schema = json.loads(_EVENT_SCHEMA_PATH.read_text("utf-8"))
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(ev)
    )
    field = ".".join(str(p) for p in error.absolute_path) if error is not None else ""
    what = f"field {field!r} is wrong: " if field else ""
    raise Damaged(
        path, n, f"does not match the event schema ({what}{error.message if error else '?'})",
        events_fix(run_dir_of(path)),
    )  # fmt: skip


def same_run(snapshot: Snapshot, run_id: str) -> None:
    theirs = snapshot.state["run_id"]
    if snapshot.state["seq"] > 0 and theirs != run_id:
        raise Damaged(
            snapshot.path, _line_of(snapshot.path, ("run_id",)),
            f"belongs to run {theirs!r}, not {run_id!r} (its directory): copied from another run",
            state_fix(snapshot.path.parent),
        )  # fmt: skip


def compare(st: State, snapshot: Snapshot, path: Path, at: int, n: int) -> None:
    """The fold stopped at seq ``n``, line ``at`` of ``path`` (0: before any)."""
    found = _first_difference(snapshot.state, st, ())
    if found is None:
        return
    keys, theirs, ours = found
    name = ".".join(keys) or "(the whole file)"
    line = f" ({path.name} line {at})" if at else ""
    raise Damaged(
        snapshot.path, _line_of(snapshot.path, keys),
        f"says {name} is {_short(theirs)}, but the events up to seq {n}{line} fold to "
        f"{_short(ours)}: it was edited by hand, or is not this run's", state_fix(run_dir_of(path)),
    )  # fmt: skip


_MISSING = object()


Difference = tuple[tuple[str, ...], Any, Any]


def _first_difference(a: Any, b: Any, keys: tuple[str, ...]) -> Difference | None:
    """The first path (in sorted key order) where ``a`` and ``b`` differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            x, y = a.get(k, _MISSING), b.get(k, _MISSING)
            if x != y:
                return _first_difference(x, y, (*keys, str(k)))
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, (*keys[:-1], f"{keys[-1] if keys else ''}[{i}]"))
        return None
    return keys, a, b


def _short(value: Any) -> str:
    if value is _MISSING:
        return "absent"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "…"


def _line_of(path: Path, keys: tuple[str, ...]) -> int | None:
    """The line of state.json holding ``keys`` (a top-level key, or an entry of a map written
    one entry a line), or None when it cannot be found."""
    try:
        lines = path.read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    if not keys:
        return 1
    top = keys[0].split("[", 1)[0]
    found = None
    for i, text in enumerate(lines):
        if text.startswith(f"  {json.dumps(top)}:"):
            found = i
            break
    if found is None:
        return None
    if len(keys) > 1 and lines[found].rstrip().endswith("{"):
        entry = f"    {json.dumps(keys[1].split('[', 1)[0])}:"
        for j in range(found + 1, len(lines)):
            if lines[j].startswith("  }"):
                break
            if lines[j].startswith(entry):
                return j + 1
    return found + 1
