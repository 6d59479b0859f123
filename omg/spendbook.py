"""Pure: a spend book — what the runs of one scope (a pull request, or the repository in one
UTC day) spent or hold reserved, one entry per agent execution, as the legs record it.

A leg reserves an execution's entry before it starts (at the node's ``budget_usd``, or $0 when
it has none) and settles it at what the execution cost. The book is read back from git, so it
is checked like any other input: a book that is not one omg wrote is refused with its ref.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TypedDict

from omg import strictjson
from omg.errors import StateError

#: Bytes of a book read back; past this it is not one omg wrote (or a scope far past any cap).
LIMIT = 8 << 20
#: Entries one book holds at most: a new reservation past it is refused as a damaged book.
MAX_ENTRIES = 50_000


class SpendEntry(TypedDict):
    """One agent execution: its run and node, its cost (or reservation), settled or not."""

    run: str
    node: str
    usd: float
    settled: bool
    at: str  # when it was reserved (ISO 8601 UTC)


class Book(TypedDict):
    """The spend of one scope (``pr/12``, ``day/2026-12-04``)."""

    scope: str
    entries: dict[str, SpendEntry]


#: An execution a record shows, as a book takes it: (entry key, node, usd).
Spent = tuple[str, str, float]

#: The events that carry an execution's spend.
SPENDING = ("node_retried", "node_passed", "node_failed")


def recorded(
    run_id: str, events: Iterable[Mapping[str, object]], budgets: Mapping[str, float]
) -> list[Spent]:
    """What each spend of ``events`` (a run's record) books, as a leg books it: its cost, or
    its node's ``budgets`` entry when the cost is unknown (the reservation stands) — keyed by
    the run and the event's seq, so one record is never booked twice."""
    out: list[Spent] = []
    for ev in events:
        cost, unknown = ev.get("cost_usd") or 0.0, bool(ev.get("cost_unknown"))
        if ev.get("event") not in SPENDING or not isinstance(cost, int | float):
            continue
        node = str(ev.get("node_id", ""))
        usd = max(float(cost), budgets.get(node, 0.0)) if unknown else float(cost)
        if usd > 0 and math.isfinite(usd):
            out.append((f"{run_id}:{node}:{ev.get('seq')}", node, round(usd, 10)))
    return out


def empty(scope: str) -> Book:
    return {"scope": scope, "entries": {}}


def repair(ref: str, remote: str | None) -> str:
    """How to repair the book at ``ref`` (on ``remote``, or kept in this repository alone)."""
    if remote is None:
        look, put, drop = (
            f"`git log -p {ref}`",
            f"`git update-ref {ref} <commit>`",
            (f"`git update-ref -d {ref}`"),
        )
    else:
        look = f"`git fetch {remote} {ref}` then `git log -p FETCH_HEAD`"
        put = f"`git push --force {remote} <commit>:{ref}`"
        drop = f"`git push {remote} :{ref}`"
    return (
        f"no agent node starts against a book that cannot be read. omg writes this book "
        f"itself: {look} shows each version, and {put} puts the last good one back; deleting "
        f"it ({drop}) forgets the scope's spend"
    )


def parse(data: bytes, scope: str, where: str, fix: str | None = None) -> Book:
    """The book in ``data`` (read from ``where``); a StateError naming it, and ``fix``, when it
    is not one omg wrote — an empty file included: a book is never read as $0."""
    fix = fix or repair(where, None)
    if not data:
        raise StateError(f"spend book {where} is an empty file; {fix}")
    if len(data) > LIMIT:
        raise StateError(f"spend book {where} is over {LIMIT >> 20} MiB; {fix}")
    try:
        raw = strictjson.loads(data)
    except ValueError as exc:
        raise StateError(f"spend book {where} is not JSON omg wrote ({exc}); {fix}") from None
    if not isinstance(raw, Mapping) or raw.get("scope") != scope:
        raise StateError(f"spend book {where} is not the book of {scope}; {fix}")
    entries = raw.get("entries")
    if not isinstance(entries, Mapping):
        raise StateError(f"spend book {where} has no entries map; {fix}")
    out: dict[str, SpendEntry] = {}
    for key, e in entries.items():
        if not (
            isinstance(e, Mapping)
            and isinstance(e.get("run"), str)
            and isinstance(e.get("node"), str)
            and isinstance(e.get("usd"), int | float)
            and not isinstance(e.get("usd"), bool)
            and e["usd"] >= 0
            and isinstance(e.get("settled"), bool)
            and isinstance(e.get("at"), str)
        ):
            raise StateError(f"spend book {where}: entry {str(key)[:80]!r} is malformed; {fix}")
        out[str(key)] = {
            "run": e["run"],
            "node": e["node"],
            "usd": float(e["usd"]),
            "settled": e["settled"],
            "at": e["at"],
        }
    book: Book = {"scope": scope, "entries": out}
    if not math.isfinite(spent(book)):
        raise StateError(f"spend book {where}: its amounts add up past any number; {fix}")
    return book


def dumps(book: Book) -> bytes:
    return (json.dumps(book, sort_keys=True, indent=1, allow_nan=False) + "\n").encode()


def spent(book: Book) -> float:
    """Settled costs plus what the executions in flight hold reserved."""
    return round(sum(e["usd"] for e in book["entries"].values()), 10)


def reserve(book: Book, key: str, run: str, node: str, usd: float, at: str) -> Book:
    """``book`` with execution ``key`` reserved at ``usd``."""
    _finite(usd)
    if len(book["entries"]) >= MAX_ENTRIES:
        raise StateError(f"spend book {book['scope']} holds {MAX_ENTRIES} executions already")
    entry: SpendEntry = {"run": run, "node": node, "usd": usd, "settled": False, "at": at}
    return {"scope": book["scope"], "entries": {**book["entries"], key: entry}}


def settle(book: Book, key: str, usd: float | None) -> Book:
    """``book`` with execution ``key`` settled at ``usd`` (None: unknown — its reservation
    stands); a key it does not hold is left out (nothing to settle)."""
    if usd is not None:
        _finite(usd)
    held = book["entries"].get(key)
    if held is None:
        return book
    cost = held["usd"] if usd is None else max(usd, 0.0)
    entry: SpendEntry = {**held, "usd": round(cost, 10), "settled": True}
    return {"scope": book["scope"], "entries": {**book["entries"], key: entry}}


def release(book: Book, key: str) -> Book:
    """``book`` without execution ``key`` (a reservation whose execution never started)."""
    entries = {k: v for k, v in book["entries"].items() if k != key}
    return {"scope": book["scope"], "entries": entries}


def _finite(usd: float) -> None:
    """No amount past any number goes into a book (it would read back as damaged)."""
    if not math.isfinite(usd):
        raise StateError(f"an execution's cost of {usd} cannot be booked: it is no amount")
