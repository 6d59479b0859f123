"""The verified point: how far a run's event log was last verified — each file's size and
line count, the sha256 of those bytes in order, and their fold — so the next look checks only
the lines after it, and any change to what it covers sends the record back to the whole check.

It is a cache beside the record (``verified.json`` in the run directory, never committed nor
restored), not part of it: an unreadable, foreign or stale point is ignored, never an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omg import strictjson
from omg.records import State

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
        point = Point(str(raw["run_id"]), files, str(raw["sha256"]), raw["state"], raw["seq"])
        fit = raw["check"] == CHECK and isinstance(point.state, dict) and files
        fit = fit and type(point.seq) is int and type(point.state.get("seq")) is int
        return point if fit and point.run_id == run_dir.name else None
    except (OSError, ValueError, LookupError, TypeError, RecursionError):
        return None


def write_point(run_dir: Path, point: Point) -> None:
    """Record ``point`` atomically; a run directory omg may not write keeps its old one."""
    from omg.state.snapshot import atomic_write  # snapshot imports the check, which imports this

    body = {
        "check": CHECK,
        "run_id": point.run_id,
        "files": [[f.name, f.size, f.lines] for f in point.files],
        "sha256": point.sha256,
        "seq": point.seq,
        "state": point.state,
    }
    try:
        atomic_write(run_dir / VERIFIED, json.dumps(body, separators=(",", ":")) + "\n")
    except (OSError, ValueError):
        return
