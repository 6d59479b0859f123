"""The ledger kept with the verified point: the execution rows folded up to a point of the log,
in ``ledger.json`` beside ``verified.json``, so a look at a run already looked at folds only the
events after it.

Like the point it is a cache of this machine's, never committed nor restored. ``verified.json``
names it by the sha256 of its bytes and by where in the log it stops (``vouched.Kept``), a
place within the bytes the point covers, which the record check hashes again before the point
is used; a point reached by the whole check names none. So a ledger file changed, truncated,
replaced or linked, or a record changed under it, is never folded on from: the rows are then
folded from every event, and kept anew.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterator
from dataclasses import fields, replace
from operator import attrgetter
from pathlib import Path
from typing import Any, get_args

from omg.errors import StateError
from omg.state.chunks import MAX_LINE, open_record
from omg.state.events import Event
from omg.state.ledger import Book, Ledger, Limits, Row, RowVerdict
from omg.state.snapshot import atomic_write
from omg.state.store import RunDir
from omg.state.verify import events_fix, log_name
from omg.state.vouched import VERIFIED, Kept, Point, encoded, read_point

#: The kept ledger's file in the run directory (git/runbranch.py skips it, as verified.json).
LEDGER = "ledger.json"
#: Bumped whenever a row's fields, the fold of the rows or the file's keys change: an older file
#: is then ignored.
FORMAT = 2
#: Never read more than this (a file put in its place is not read into memory whole).
MAX_BYTES = 1 << 28
#: The types each field of a kept row may have, in ``Row``'s order (checked, never trusted).
_FIELDS: tuple[frozenset[type], ...] = tuple(
    frozenset(kinds)
    for kinds in (
        (str,), (int,), (int,), (int,), (int, float), (bool,), (int, float, type(None)),
        (str,), (str, type(None)), (str, type(None)), (str,), (int,), (int,), (str,), (bool,),
    )
)  # fmt: skip
#: Each row's fields, in ``Row``'s order.
_ROW = attrgetter(*(f.name for f in fields(Row)))
#: The columns printed as they are (the node, verdict, provenance, cause and anomaly; a row's
#: detail is made inert when printed): no control character, as no event's could hold one.
_PLAIN = tuple(i for i, f in enumerate(fields(Row)) if f.name in (
    "node_id", "verdict", "provenance", "cause", "anomaly"))  # fmt: skip
_VERDICT = next(i for i, f in enumerate(fields(Row)) if f.name == "verdict")


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a number a row holds")


#: JSON as the kept file holds it: NaN and the infinities refused (a number past a float's
#: range is caught by the check of each column), the rest read at C speed.
_DECODER = json.JSONDecoder(parse_constant=_refuse)


def run_ledger(rundir: RunDir, limits: Limits) -> Ledger:
    """The run's ledger, as ``ledger.ledger`` folds it from every event, from the rows kept
    with the verified point: only the events after them are folded, up to the point, and the
    rows are kept again there (when they moved).

    After ``load_run`` in this process (``rundir.point``: the point its check reached) the
    ledger stops at that point, as the state does. Otherwise (a leg's end: its record was
    checked when it began) the point is the one on disk, and the ledger goes on to the log's
    end; rows kept with a point whose bytes have changed since are dropped by the next check.
    """
    checked = rundir.point is not None
    point = rundir.point if checked else read_point(rundir.path)
    files = rundir.segments()
    names = [log_name(p, rundir.path) for p in files]
    at = _place(point, names)
    if point is None or at is None:  # no point of these files: every event, nothing kept
        book = Book()
        book.feed(_events(rundir, files, _START, None))
        return book.closed(limits)
    try:
        return _from_point(rundir, limits, point, files, names, at, checked)
    except (_Off, StateError):
        if checked:
            raise
    # a leg's end, from a point no check read this time (edited, or stale under the leg): the
    # whole record, as the point were not there
    book = Book()
    book.feed(_events(rundir, files, _START, None))
    return book.closed(limits)


def _from_point(
    rundir: RunDir, limits: Limits, point: Point, files: list[Path], names: list[str],
    at: Place, checked: bool,
) -> Ledger:  # fmt: skip
    """``run_ledger`` on from ``point`` (at place ``at`` of ``files``)."""
    book, kept = _read(rundir.path, point)
    try:
        if kept is not None:
            begin = _kept_place(kept, names)
            book.feed(_events(rundir, files, begin, at, after=kept.seq, until=point.seq))
        else:
            book.feed(_events(rundir, files, _START, at))
    except (_Off, StateError):  # the log does not go on from where the kept rows stop (a line
        # cut there is not a line of the record: the whole fold below reads the record itself)
        book, kept = Book(), None
        book.feed(_events(rundir, files, _START, at))
    if kept is None or kept.seq != point.seq:
        _keep(rundir.path, point, book)
    if not checked:
        book.feed(_events(rundir, files, at, None))
    return book.closed(limits)


#: A place in the log: a file's index, and the bytes and lines of it before the place.
Place = tuple[int, int, int]
_START: Place = (0, 0, 0)


class _Off(Exception):
    """The kept rows do not stop at a place of this log, or the line after them is not the
    event they stop before."""


def _place(point: Point | None, names: list[str]) -> Place | None:
    """Where ``point`` ends in the log whose files are ``names`` (None: not a point of it)."""
    if point is None or [f.name for f in point.files] != names[: len(point.files)]:
        return None
    last = point.files[-1]
    return len(point.files) - 1, last.size, last.lines


def _kept_place(kept: Kept, names: list[str]) -> Place:
    if kept.name not in names:
        raise _Off
    return names.index(kept.name), kept.size, kept.lines


#: What reading a kept file that is not fit to use raises: the file is then never trusted.
_UNFIT = (StateError, OSError, ValueError, LookupError, TypeError, AttributeError, RecursionError)


def _read(run_dir: Path, point: Point) -> tuple[Book, Kept | None]:
    """The rows kept with ``point``, or an empty book when there are none fit to use."""
    kept = point.kept
    if kept is None:
        return Book(), None
    try:
        fh = open_record(run_dir / LEDGER, events_fix(run_dir))
        with fh:
            if os.fstat(fh.fileno()).st_size > MAX_BYTES:
                return Book(), None
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES or hashlib.sha256(data).hexdigest() != kept.sha256:
            return Book(), None
        raw: Any = _DECODER.decode(data.decode())
        head = (raw["format"], raw["run_id"], raw["seq"], raw["at"])
        at = [kept.name, kept.size, kept.lines]
        if head != (FORMAT, run_dir.name, kept.seq, at) or type(raw["running"]) is not bool:
            return Book(), None  # (the place the point names is the file's own, digested)
        rows = _rows(raw["columns"])
        open_ = {str(nid): rows[i] for nid, i in raw["open"].items() if _index(i, rows)}
        if len(open_) != len(raw["open"]):
            return Book(), None
        return Book(rows, open_, raw["running"]), kept
    except _UNFIT:
        return Book(), None  # a link, a directory, bytes or rows not kept here: never trusted


def _finite(value: float | None) -> bool:
    return value is None or math.isfinite(value)


def _index(i: Any, rows: list[Row]) -> bool:
    return type(i) is int and 0 <= i < len(rows)


def _rows(columns: Any) -> list[Row]:
    """The rows of the kept file's columns (one list per field of ``Row``), each value's type
    checked, or a TypeError."""
    if type(columns) is not list or len(columns) != len(_FIELDS):
        raise TypeError("not the columns of the rows")
    for column, kinds in zip(columns, _FIELDS, strict=True):
        if type(column) is not list or len(column) != len(columns[0]):
            raise TypeError("not a column")
        if not set(map(type, column)) <= kinds:
            raise TypeError("a value of the wrong type")
        if float in kinds and not all(map(_finite, column)):
            raise TypeError("a number past a float's range")
    for i in _PLAIN:
        if not all(v is None or v.isprintable() for v in columns[i]):
            raise TypeError("a control character in a printed column")
    if not set(columns[_VERDICT]) <= set(get_args(RowVerdict)):
        raise TypeError("not a verdict a row holds")
    return list(map(Row, *columns))


def _events(
    rundir: RunDir,
    files: list[Path],
    begin: Place,
    end: Place | None,
    *,
    after: int = 0,
    until: int = 0,
) -> Iterator[Event]:
    """The events of the log's ``files`` from place ``begin`` to place ``end`` (None: the
    log's end), each line parsed as ``read_events`` parses it; the first must be seq
    ``after`` + 1 and the last seq ``until`` (0: not checked)."""
    seq = after
    fix = events_fix(rundir.path)
    last = len(files) - 1 if end is None else end[0]
    for i in range(begin[0], last + 1):
        skip, lines = begin[1:] if i == begin[0] else (0, 0)
        with open_record(files[i], fix) as fh:
            fh.seek(skip)
            left = end[1] - skip if end is not None and i == end[0] else None
            while left is None or left > 0:  # line by line, split at \n alone, as the check
                raw = fh.readline(MAX_LINE + 1 if left is None else min(left, MAX_LINE + 1))
                if not raw:
                    break
                if left is not None:
                    left -= len(raw)
                lines += 1
                ev = rundir.parse_line(raw, lines, files[i])
                if after and ev.get("seq") != after + 1:
                    raise _Off
                after, seq = 0, ev.get("seq")
                yield ev
    if until and seq != until:
        raise _Off


def _keep(run_dir: Path, point: Point, book: Book) -> None:
    """Keep ``book`` (the fold up to ``point``) beside the record, and name it in the point:
    the rows first, then the point naming them — each write atomic, a crash between leaves a
    point naming the rows of before, whose digest no longer matches."""
    index = {id(row): i for i, row in enumerate(book.rows)}
    last = point.files[-1]
    body = {
        "format": FORMAT,
        "run_id": run_dir.name,
        "seq": point.seq,
        "at": [last.name, last.size, last.lines],
        "running": book.running,
        "open": {nid: index[id(row)] for nid, row in book.open_.items()},
        "columns": [list(c) for c in zip(*map(_ROW, book.rows), strict=True)]
        or [[] for _ in _FIELDS],
    }  # fmt: skip
    try:
        text = json.dumps(body, separators=(",", ":"), allow_nan=False) + "\n"
    except ValueError:  # a cost past any bound: no record holds one, so none is kept
        return
    digest = hashlib.sha256(text.encode()).hexdigest()
    kept = Kept(point.seq, last.name, last.size, last.lines, digest)
    with contextlib.suppress(OSError):  # (a directory omg may not write: none kept)
        atomic_write(run_dir / LEDGER, text)
        atomic_write(run_dir / VERIFIED, encoded(replace(point, kept=kept)))
