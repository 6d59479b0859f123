"""The verified point: how far a run's event log was last verified — each file's size and
line count, the sha256 of those bytes in order, and their fold — so the next look checks only
the lines after it, and any change to what it covers sends the record back to the whole check.

It is a cache beside the record (``verified.json`` in the run directory, never committed nor
restored), not part of it: an unreadable, foreign or stale point is ignored, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from omg import strictjson
from omg.errors import StateError
from omg.records import State
from omg.state.verify import (
    Damaged,
    Snapshot,
    Walk,
    compare,
    log_name,
    reached,
    run_dir_of,
    same_run,
    walk_file,
    whole,
)

#: The point's file in the run directory (git/runbranch.py skips it, as it does leg.lock).
VERIFIED = "verified.json"
#: Bumped whenever the record check changes what it accepts: an older point is then ignored.
CHECK = 1


@dataclass(frozen=True)
class LogFile:
    """One file of the event log as verified: its name in the run directory, bytes, lines."""

    name: str
    size: int
    lines: int


@dataclass(frozen=True)
class Kept:
    """The ledger kept with a point (``state/kept.py``): the file whose bytes hash to
    ``sha256`` holds the fold of the log's events up to seq ``seq``, which ends ``size`` bytes
    (``lines`` lines) into the log's file ``name`` — bytes the point covers."""

    seq: int
    name: str
    size: int
    lines: int
    sha256: str


@dataclass(frozen=True)
class Point:
    """The log's first ``files`` (the last one up to its size then) hash to ``sha256`` and fold
    to ``state``; their last line holds ``seq`` (the state's own seq is its last event's but a
    ``node_started``'s); of run ``run_id``. The check folds on from ``state`` in place: a
    point is used once."""

    run_id: str
    files: tuple[LogFile, ...]
    sha256: str
    state: State
    seq: int
    kept: Kept | None = None


def read_point(run_dir: Path) -> Point | None:
    """The point recorded in ``run_dir``, or None when there is none fit to use."""
    try:
        fd = os.open(run_dir / VERIFIED, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            raw: Any = strictjson.loads(fh.read())
        files = tuple(LogFile(str(n), int(s), int(k)) for n, s, k in raw["files"])
        kept = _kept(raw.get("kept"), files)
        point = Point(str(raw["run_id"]), files, str(raw["sha256"]), raw["state"], raw["seq"], kept)
        fit = raw["check"] == CHECK and isinstance(point.state, dict) and files
        fit = fit and type(point.seq) is int and type(point.state.get("seq")) is int
        return point if fit and point.run_id == run_dir.name else None
    except (OSError, ValueError, LookupError, TypeError, RecursionError):
        return None


def _kept(raw: Any, files: tuple[LogFile, ...]) -> Kept | None:
    """The kept ledger a point names, when it lies within the bytes the point covers."""
    if not isinstance(raw, list) or len(raw) != 5:
        return None
    seq, name, size, lines, digest = raw
    if not (type(seq) is int and type(size) is int and type(lines) is int):
        return None
    if not (isinstance(name, str) and isinstance(digest, str)):
        return None
    sizes = {f.name: f.size for f in files}
    if name not in sizes or not 0 <= size <= sizes[name] or lines < 0 or seq < 0:
        return None
    return Kept(seq, name, size, lines, digest)


def encoded(point: Point) -> str:
    """The text of ``verified.json`` recording ``point``."""
    body: dict[str, Any] = {
        "check": CHECK,
        "run_id": point.run_id,
        "files": [[f.name, f.size, f.lines] for f in point.files],
        "sha256": point.sha256,
        "seq": point.seq,
        "state": point.state,
    }
    if point.kept is not None:
        k = point.kept
        body["kept"] = [k.seq, k.name, k.size, k.lines, k.sha256]
    return json.dumps(body, separators=(",", ":")) + "\n"


def verify_from(
    segments: Sequence[Path],
    snapshot: Snapshot | None = None,
    *,
    max_line: int,
    opener: Callable[[Path], BinaryIO] | None = None,
    point: Point | None = None,
) -> tuple[State, int, Point]:
    """``state.verify``, and the point it reached. From ``point`` (the log verified up to it
    before) only the lines after it are checked and folded — when every byte it covers is as
    it was (their sha256), the files it names are the log's first, and ``snapshot`` is not
    older than it; otherwise, and when a line after it is refused, the whole log is checked,
    so a refusal always comes from the whole check. The ledger kept with ``point`` is carried
    to the point reached only from it: the bytes it covers were just found unchanged."""
    opener = opener or _open
    if point is not None:
        try:
            walk = _on_from(segments, snapshot, max_line, opener, point)
        except Damaged:
            walk = None
        if walk is not None:
            return walk.st, walk.n, replace(_point(walk, segments), kept=point.kept)
    walk = whole(segments, snapshot, max_line, opener)
    return walk.st, walk.n, _point(walk, segments)


def _on_from(
    segments: Sequence[Path], snapshot: Snapshot | None, max_line: int,
    opener: Callable[[Path], BinaryIO], point: Point,
) -> Walk | None:  # fmt: skip
    """The check from ``point`` on, or None when the point does not hold for these files."""
    run_dir = run_dir_of(segments[0])
    covered = len(point.files)
    names = [log_name(p, run_dir) for p in segments[:covered]]
    snap_seq = -1 if snapshot is None else snapshot.state["seq"]
    folded = point.state["seq"]  # the fold's seq: a node_started after it changes nothing
    if (
        point.run_id != run_dir.name
        or names != [f.name for f in point.files]
        or (0 <= snap_seq <= point.seq and snap_seq != folded)  # (the whole check compares it)
    ):
        return None
    digest = hashlib.sha256()
    with ExitStack() as stack:
        fh: BinaryIO | None = None
        for i, vouched in enumerate(point.files):
            try:
                fh = stack.enter_context(opener(segments[i]))
            except (OSError, StateError):
                return None
            data = fh.read(vouched.size)
            if len(data) != vouched.size or (i < covered - 1 and fh.read(1)):
                return None  # a file grew or shrank under the point
            digest.update(data)
        if fh is None or digest.hexdigest() != point.sha256:
            return None
        st = point.state
        if snapshot is not None:
            same_run(snapshot, run_dir.name)
            if snap_seq == folded:
                compare(st, snapshot, segments[covered - 1], point.files[-1].lines, snap_seq)
        walk = Walk(run_dir.name, st, snapshot, snap_seq, max(snap_seq, point.seq), max_line)
        walk.n, walk.legs, walk.digest = point.seq, len(st["legs"]), digest
        walk.files = [(f.name, f.size, f.lines) for f in point.files[:-1]]
        last = point.files[-1]
        walk.segment(
            fh, segments[covered - 1], empty_ok=covered == len(segments),
            lines=last.lines, size=last.size,
        )  # fmt: skip
    for i in range(covered, len(segments)):
        walk_file(walk, segments, i, opener)
    reached(walk, segments, snapshot)
    return walk


def _point(walk: Walk, segments: Sequence[Path]) -> Point:
    files = tuple(LogFile(*f) for f in walk.files)
    run_id = run_dir_of(segments[0]).name
    return Point(run_id, files, walk.digest.hexdigest(), walk.st, walk.n)


def _open(path: Path) -> BinaryIO:
    return path.open("rb")
