"""pure: what `omg prune` removes — the refs of settled runs past an age, never a run that may
still move, a lane whose work is on no other branch, an open pull request's spend book, nor a
day's book the caps may still write."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Literal

from omg.errors import UsageError

#: A run in one of these has ended for good: nothing writes its refs again.
SETTLED = ("passed", "failed", "superseded")
#: Day books kept whatever the age: today's and yesterday's (UTC). A leg reserves in the book of
#: the day it starts an execution and settles there when it ends, which may be after midnight.
DAY_WINDOW = 2
_AGE = re.compile(r"(\d+(?:\.\d+)?)([dhw])")
_UNIT = {"h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}


def age(text: str) -> float:
    """``30d``, ``12h``, ``2w`` (``0d``: any age) in seconds; a UsageError for anything else."""
    m = _AGE.fullmatch(text.strip())
    if m is None:
        raise UsageError(
            f"--older-than {text!r} is not an age: write a number and d (days), h (hours) or "
            "w (weeks), e.g. 30d"
        )
    return float(m.group(1)) * _UNIT[m.group(2)]


@dataclass(frozen=True)
class Ref:
    """One ref as judged: its name, the commit it pointed at, that commit's time (epoch s)."""

    name: str
    sha: str
    time: float


@dataclass(frozen=True)
class Lane:
    """A run's lane branch: ``held_by`` names a branch kept anyway whose history holds its head
    ('' none; None not looked at), ``checked_out`` a worktree using it ('' none)."""

    ref: Ref
    held_by: str | None = None
    checked_out: str = ""
    base: Ref | None = None  # where it started (``refs/omg/base/…``): kept or removed with it


@dataclass(frozen=True)
class Run:
    """One run's refs. ``status``: the record's (``passed``, ``failed``, ``superseded``,
    ``running``, ``paused``), ``unreadable`` when it cannot be read, ``absent`` when the run
    branch is gone (refs left behind); ``shown`` words it for people."""

    run_id: str
    branch: Ref | None
    status: str
    shown: str = ""
    live_lease: bool = False
    lanes: tuple[Lane, ...] = ()
    others: tuple[Ref, ...] = ()  # notes, fan-out records, lease, wait, lane bases

    @property
    def touched(self) -> float:
        """When the run last changed: its branch's head commit, else its newest ref's."""
        if self.branch is not None:
            return self.branch.time
        times = [r.time for r in self.others] + [lane.ref.time for lane in self.lanes]
        return max(times, default=0.0)


@dataclass(frozen=True)
class Book:
    """A spend book: ``kind`` pr or day (a rehearsal's too), ``key`` the PR number or the day;
    ``pr_state`` what GitHub says of the pull request (``unknown``: not asked, or no answer)."""

    ref: Ref
    kind: Literal["pr", "day"]
    key: str
    pr_state: Literal["open", "closed", "unknown"] = "unknown"


@dataclass(frozen=True)
class Policy:
    """When a prune runs, the age past which settled things go, and whether failed runs stay."""

    now: float
    older_than_s: float
    keep_failed: bool = False


@dataclass(frozen=True)
class Verdict:
    """A ref removed or kept, and why."""

    ref: Ref
    remove: bool
    why: str
    run_id: str = ""


def _days(seconds: float) -> str:
    d = seconds / 86400
    return f"{d:.0f} day(s)" if d >= 1 else f"{seconds / 3600:.0f} hour(s)"


def run_settled(run: Run, policy: Policy) -> str | None:
    """Why the whole run stays (None: it is settled and past the age, its refs may go)."""
    if run.live_lease:
        return "a leg holds its lease now"
    if run.status == "failed" and policy.keep_failed:
        return "failed (--keep-failed)"
    if run.status not in (*SETTLED, "absent"):
        return run.shown or run.status
    idle = policy.now - run.touched
    if idle < policy.older_than_s:
        return f"last changed {_days(max(idle, 0.0))} ago"
    return None


def decide_run(run: Run, policy: Policy) -> list[Verdict]:
    """Every ref of ``run``, removed or kept: all kept while the run may move or is younger
    than the age; else each removed but a lane whose head no kept branch holds, or one checked
    out in a worktree (with its base). The run branch comes last, so a prune cut short leaves
    the run listed."""
    why_not = run_settled(run, policy)
    if why_not is not None:
        refs = [*run.others]
        for lane in run.lanes:
            refs += [lane.ref] if lane.base is None else [lane.ref, lane.base]
        refs += [] if run.branch is None else [run.branch]
        return [Verdict(r, False, why_not, run.run_id) for r in refs]
    what = "no run branch" if run.status == "absent" else run.shown or run.status
    gone = f"{what}, last changed {_days(max(policy.now - run.touched, 0.0))} ago"
    out = [Verdict(r, True, gone, run.run_id) for r in run.others]
    for lane in run.lanes:
        if lane.checked_out:
            remove, why = False, f"checked out at {lane.checked_out}; `omg clean {run.run_id}`"
            why += " removes it"
        elif not lane.held_by:
            remove = False
            why = "holds work on no other branch: merge it, push it as a branch, or delete it"
        else:
            remove, why = True, f"{gone}; its work is on {lane.held_by}"
        pair = [lane.ref] if lane.base is None else [lane.ref, lane.base]
        out += [Verdict(r, remove, why, run.run_id) for r in pair]
    if run.branch is not None:
        out.append(Verdict(run.branch, True, gone, run.run_id))
    return out


def decide_book(book: Book, policy: Policy) -> Verdict:
    """A pull request's book goes once the PR is closed and the book past the age; a day's
    once the day is out of the caps' window (today, yesterday UTC) and past the age."""
    idle = policy.now - book.ref.time
    if book.kind == "pr":
        if book.pr_state == "open":
            return Verdict(book.ref, False, f"pull request #{book.key} is open")
        if book.pr_state == "unknown":
            return Verdict(book.ref, False, f"the state of pull request #{book.key} is unknown")
        if idle < policy.older_than_s:
            return Verdict(book.ref, False, f"last changed {_days(max(idle, 0.0))} ago")
        why = f"pull request #{book.key} is closed, its book last changed {_days(idle)} ago"
        return Verdict(book.ref, True, why)
    try:
        day = date.fromisoformat(book.key)
    except ValueError:
        return Verdict(book.ref, False, f"{book.key!r} is not a day")
    today = datetime.fromtimestamp(policy.now, UTC).date()
    if day > today - timedelta(days=DAY_WINDOW):
        return Verdict(book.ref, False, "the day's cap may still be written (today, yesterday)")
    ended = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp() + 86400
    if policy.now - ended < policy.older_than_s or idle < policy.older_than_s:
        return Verdict(book.ref, False, f"the day {book.key} is younger than the age")
    return Verdict(book.ref, True, f"the day {book.key} ended {_days(policy.now - ended)} ago")
