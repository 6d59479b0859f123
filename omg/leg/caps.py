"""Spend caps beyond one run: per pull request (all its runs) and per UTC day (all runs of the
repository), checked before every agent execution starts.

Each scope has a spend book on a ref of its own (``omg.spendbook``, ``refs/omg/spend/…``). A
leg reserves an execution's entry before it starts — a compare-and-swap of the book, so of two
legs racing for the last dollars one reads the other's reservation — and settles it when the
execution ends. A scope whose book (settled plus reserved) has reached its cap, plus what
writers approved for this run, pauses the run instead: no execution starts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from omg import spendbook
from omg.errors import MovedOn, OmgError, StateError, Unreadable
from omg.kinds import CapScope
from omg.records import CappedRecord, LegRecord

if TYPE_CHECKING:  # a leg without git never imports pygit2 for its caps
    from omg.git.repo import RunRepo

#: Compare-and-swap tries of one reservation before the leg gives up (other legs kept winning).
TRIES = 8


@dataclass(frozen=True)
class SpendCaps:
    """The caps a leg enforces: per pull request and per UTC day (None: no cap)."""

    pr_usd: float | None = None
    day_usd: float | None = None

    def __bool__(self) -> bool:
        return self.pr_usd is not None or self.day_usd is not None

    def over(self, pr_usd: float | None, day_usd: float | None) -> SpendCaps:
        """These caps (a leg's own: the action's inputs) over a graph's: each one unset here
        is the graph's."""
        return SpendCaps(
            self.pr_usd if self.pr_usd is not None else pr_usd,
            self.day_usd if self.day_usd is not None else day_usd,
        )


@dataclass
class CapGuard:
    """One leg's reservations against the spend books of its run's scopes."""

    repo: RunRepo
    remote: str | None
    run_id: str
    caps: SpendCaps
    pr: int | None  # the pull request the run judges (None: no per-PR scope)
    approved: Callable[[], float]  # what writers approved beyond the caps for this run
    rehearsal: bool = False  # a rehearsal's stand-in costs go in books of their own
    #: the remote each book is read from once, when the leg writes none there (the run job of a
    #: leg split in two): its reservations then go in this repository's copy
    books_from: str | None = None
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    warn: Callable[[str], None] = lambda _: None
    #: execution key → the scopes it holds a reservation in
    held: dict[str, list[str]] = field(default_factory=dict)
    by_node: dict[str, str] = field(default_factory=dict)  # node → its execution's key
    #: node → the least room its scopes had when it was admitted (what omg's model proxy
    #: holds its execution to)
    rooms: dict[str, float] = field(default_factory=dict)
    #: book → its commit in this repository as this leg last left it, for each book read from
    #: ``books_from``: a node runs in this checkout and could move the ref; a moved one is refused
    taken: dict[str, str | None] = field(default_factory=dict)

    def scopes(self) -> list[tuple[CapScope, str, float]]:
        """(scope, book name, cap) of each cap that applies to the run now."""
        out: list[tuple[CapScope, str, float]] = []
        prefix = "rehearsal-" if self.rehearsal else ""
        if self.caps.pr_usd is not None and self.pr is not None:
            out.append(("pull_request", f"{prefix}pr/{self.pr}", self.caps.pr_usd))
        if self.caps.day_usd is not None:
            out.append(
                ("day", f"{prefix}day/{self.clock().strftime('%Y-%m-%d')}", self.caps.day_usd)
            )
        return out

    def admit(self, node_id: str, reserve_usd: float) -> CappedRecord | None:
        """Reserve ``node_id``'s execution in every scope, or the cap that stops it (its
        reservations in the scopes before it released)."""
        import uuid  # only a leg with caps reserves

        key = f"{self.run_id}:{node_id}:{uuid.uuid4().hex[:12]}"
        self.rooms.pop(node_id, None)
        taken: list[str] = []
        for scope, book, cap in self.scopes():
            capped = self._reserve(book, key, node_id, reserve_usd, cap)
            if capped is not None:
                for done in taken:
                    self._update(done, lambda b: spendbook.release(b, key), "release")
                return {
                    "node_id": node_id,
                    "scope": scope,
                    "key": book.rsplit("/", 1)[1],
                    "cap_usd": cap,
                    "spent_usd": capped,
                }
            taken.append(book)
        if taken:
            self.held[key] = taken
            self.by_node[node_id] = key
        return None

    def room(self, node_id: str) -> float | None:
        """The spend cap room ``node_id``'s execution was admitted with (None: no cap)."""
        return self.rooms.get(node_id)

    def settle(self, node_id: str, usd: float | None) -> None:
        """Settle ``node_id``'s execution at ``usd`` (None: unknown, its reservation stands).
        A failure is warned about: the reservation then counts in the book, never less."""
        key = self.by_node.pop(node_id, None)
        if key is None:
            return
        for book in self.held.pop(key, []):
            try:
                self._update(book, lambda b: spendbook.settle(b, key, usd), "settle")
            except OmgError as exc:
                self.warn(f"warning: the spend of {node_id} stays reserved in {book}: {exc}")

    def check(self) -> None:
        """Read every book that applies: one that cannot be read is refused (a StateError
        naming its ref and the repair) before the leg records or runs anything."""
        for _, book, _ in self.scopes():
            self._read(book)

    def book_spent(self, spent: list[spendbook.Spent]) -> None:
        """Append executions to every scope's book, settled at what they cost — the publish
        job's, from the verified record; an entry the book holds already is left as it is."""
        if not spent:
            return
        at = self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")

        def change(book: spendbook.Book) -> spendbook.Book:
            for key, node, usd in spent:
                if key not in book["entries"]:
                    book = spendbook.reserve(book, key, self.run_id, node, usd, at)
                    book = spendbook.settle(book, key, usd)
            return book

        for _, book, _ in self.scopes():
            self._update(book, change, f"book {len(spent)} executions")

    def standing(self) -> list[CappedRecord]:
        """Each cap that applies, with what its scope has spent (for the report)."""
        out: list[CappedRecord] = []
        for scope, book, cap in self.scopes():
            try:
                _, parsed = self._read(book)
            except OmgError as exc:
                self.warn(f"warning: could not read the spend book {book}: {exc}")
                continue
            out.append(
                {
                    "node_id": "",
                    "scope": scope,
                    "key": book.rsplit("/", 1)[1],
                    "cap_usd": cap,
                    "spent_usd": spendbook.spent(parsed),
                }
            )
        return out

    # -- one book ----------------------------------------------------------------------------
    def _read(self, book: str) -> tuple[str | None, spendbook.Book]:
        """The book of scope ``book`` as it stands now and its commit (None: no book yet); a
        StateError naming its ref and the repair when it cannot be read — never $0."""
        from omg.git.names import spend_ref

        ref = spend_ref(book)
        source = self.books_from if self.remote is None else self.remote  # whose book it is
        where = ref if source is None else f"{ref} on {source}"
        fix = spendbook.repair(ref, source)
        if self.books_from is not None and book not in self.taken:
            self._take(book)
        try:
            got = self.repo.book(self.remote, book)
        except Unreadable as exc:
            raise StateError(f"spend book {where} {exc.problem}; {fix}") from None
        if book in self.taken and (got[0] if got else None) != self.taken[book]:
            raise StateError(
                f"spend book {ref} was moved in this checkout while the leg ran, not by omg; "
                "its caps cannot be trusted, so nothing more is admitted: run the leg again"
            )
        if got is None:
            return None, spendbook.empty(book)
        return got[0], spendbook.parse(got[1], book, where, fix)

    def _take(self, book: str) -> None:
        """The book of scope ``book`` as ``books_from`` holds it, made this repository's own;
        one that cannot be fetched or read is refused (a StateError) — never $0."""
        from omg.git.names import spend_ref

        assert self.books_from is not None
        ref = spend_ref(book)
        where, fix = f"{ref} on {self.books_from}", spendbook.repair(ref, self.books_from)
        try:
            self.taken[book] = self.repo.take_book(self.books_from, book)
        except Unreadable as exc:
            raise StateError(f"spend book {where} {exc.problem}; {fix}") from None
        except OmgError as exc:
            raise StateError(f"spend book {where} cannot be read: {exc}; {fix}") from None

    def _put(self, book: str, data: bytes, message: str, parent: str | None) -> None:
        """Write ``book`` (MovedOn when another leg wrote it first); a book read from
        ``books_from`` remembers the commit this leg left it at."""
        new = self.repo.put_book(self.remote, book, data, message, parent=parent)
        if book in self.taken:
            self.taken[book] = new

    def _reserve(self, book: str, key: str, node: str, usd: float, cap: float) -> float | None:
        """Reserve in ``book``; the book's spend when its cap is reached instead (None: held)."""
        for _ in range(TRIES):
            parent, current = self._read(book)
            spent = spendbook.spent(current)
            if spent >= cap + self.approved():
                return spent
            room = cap + self.approved() - spent
            self.rooms[node] = min(room, self.rooms.get(node, room))
            at = self.clock().strftime("%Y-%m-%dT%H:%M:%SZ")
            new = spendbook.reserve(current, key, self.run_id, node, usd, at)
            try:
                self._put(book, spendbook.dumps(new), f"reserve {node} ({self.run_id})", parent)
                return None
            except MovedOn:
                continue  # another leg wrote the book first: read it again
        raise MovedOn(f"the spend book {book} kept moving; {TRIES} tries lost to other legs")

    def _update(
        self, book: str, change: Callable[[spendbook.Book], spendbook.Book], what: str
    ) -> None:
        for _ in range(TRIES):
            parent, current = self._read(book)
            new = change(current)
            try:
                self._put(book, spendbook.dumps(new), f"{what} ({self.run_id})", parent)
                return
            except MovedOn:
                continue
        raise MovedOn(f"the spend book {book} kept moving; {TRIES} tries lost to other legs")


def post_wait(repo: RunRepo, remote: str, run_id: str, legs: list[LegRecord]) -> None:
    """Tell the resume workflow's schedule about the run's last leg: a wait it may end (a
    provider's limit; a day's cap, until the next UTC day) is recorded on the remote, and a
    wait an earlier leg recorded is cleared once the run no longer waits."""
    last = legs[-1] if legs else None
    if last is None:
        return
    due: str | None = None
    why = ""
    wait, capped = last.get("wait"), last.get("capped")
    if last.get("reason") == "limit" and wait is not None:
        due, why = wait["not_before"], f"{wait['kind']} limit at {wait['node_id']}"
    elif last.get("reason") == "spend_cap" and capped is not None and capped["scope"] == "day":
        due = next_day(datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
        why = f"the day's spend cap ({capped['key']})"
    if due is not None:
        data = json.dumps({"run_id": run_id, "not_before": due, "why": why}, sort_keys=True)
        repo.put_wait(remote, run_id, data.encode(), f"{run_id} waits until {due}: {why}")
        return
    if len(legs) > 1 and legs[-2].get("reason") in ("limit", "spend_cap"):
        repo.drop_wait(remote, run_id)


def next_day(now: datetime) -> datetime:
    """The start of the UTC day after ``now``: when a day's cap no longer holds a run back."""
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def usd(value: float) -> str:
    """$20, $3.20: whole dollars without cents."""
    return f"${value:,.0f}" if value == int(value) else f"${value:,.2f}"


def standing_text(c: CappedRecord) -> str:
    """ "$3.20 of $20 today", "$12.50 of $20 on this pull request"."""
    where = "today" if c["scope"] == "day" else "on this pull request"
    return f"{usd(round(c['spent_usd'], 2))} of {usd(c['cap_usd'])} {where}"


def describe_cap(c: CappedRecord) -> str:
    """Why a run paused at a cap, and the three ways on."""
    if c["scope"] == "day":
        what = (
            f"the per-day spend cap: {standing_text(c)} ({c['key']} UTC, all runs of the "
            "repository)"
        )
        later = "or the next day (UTC; the resume workflow's schedule continues it)"
        raise_ = "day_budget_usd in the graph or the action's day-budget-usd input"
    else:
        what = f"the pull request spend cap: {standing_text(c)} (PR #{c['key']}, all its runs)"
        later = ""
        raise_ = "pr_budget_usd in the graph or the action's pr-budget-usd input"
    ways = f"a writer's `/omg approve-spend <amount>`, a raised cap ({raise_})"
    ways += f", {later}" if later else ""
    return f"paused at {what}; {c['node_id']} was not started. Continue with {ways}"
