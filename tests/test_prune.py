"""The pure rules of `omg prune`: which refs of a run go, which lanes stay, which spend books
a cap may still read — a table of runs and books in every state."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from omg.errors import UsageError
from omg.prune import Book, Lane, Policy, Ref, Run, age, decide_book, decide_run

DAY = 86400.0
NOW = datetime(2026, 12, 4, 12, tzinfo=UTC).timestamp()
OLD, YOUNG = NOW - 40 * DAY, NOW - 2 * DAY
POLICY = Policy(NOW, 30 * DAY)


def ref(name: str, at: float = OLD) -> Ref:
    return Ref(name, "1" * 40, at)


BRANCH = ref("refs/heads/omg/runs/r")
NOTE = ref("refs/omg/notes/r/refused-c1")
LEASE = ref("refs/omg/lease/r")
RECORD = ref("refs/omg/fanout/r/build")
WAIT = ref("refs/omg/waits/r")
MERGED = Lane(ref("refs/heads/omg/work/r/a"), held_by="main")
UNMERGED = Lane(ref("refs/heads/omg/work/r/b"), held_by="", base=ref("refs/omg/base/r/b"))
IN_USE = Lane(ref("refs/heads/omg/work/r/c"), held_by="main", checked_out="/w/.omg/c")
UNLOOKED = Lane(ref("refs/heads/omg/work/r/d"))


def run(status: str, **kw: object) -> Run:
    base: dict[str, object] = {
        "run_id": "r", "branch": BRANCH, "status": status, "others": (NOTE, LEASE, RECORD, WAIT),
        "lanes": (MERGED, UNMERGED, IN_USE, UNLOOKED),
    }  # fmt: skip
    return Run(**{**base, **kw})  # type: ignore[arg-type]


ALL = [
    NOTE.name, LEASE.name, RECORD.name, WAIT.name, MERGED.ref.name, UNMERGED.ref.name,
    "refs/omg/base/r/b", IN_USE.ref.name, UNLOOKED.ref.name, BRANCH.name,
]  # fmt: skip
SETTLED_GOES = [NOTE.name, LEASE.name, RECORD.name, WAIT.name, MERGED.ref.name, BRANCH.name]


@pytest.mark.parametrize(
    ("case", "the_run", "policy", "removed", "why_kept"),
    [
        ("passed, old", run("passed"), POLICY, SETTLED_GOES, ""),
        ("failed, old", run("failed"), POLICY, SETTLED_GOES, ""),
        ("superseded, old", run("superseded"), POLICY, SETTLED_GOES, ""),
        (
            "failed, kept by --keep-failed",
            run("failed"),
            Policy(NOW, 30 * DAY, True),
            [],
            "failed (--keep-failed)",
        ),
        (
            "passed, young",
            run("passed", branch=ref(BRANCH.name, YOUNG)),
            POLICY,
            [],
            "last changed 2 day(s) ago",
        ),
        (
            "young by the branch, old refs",
            run("passed", branch=ref(BRANCH.name, NOW - 3600)),
            POLICY,
            [],
            "last changed 1 hour(s) ago",
        ),
        (
            "any age with 0d",
            run("passed", branch=ref(BRANCH.name, NOW)),
            Policy(NOW, 0),
            SETTLED_GOES,
            "",
        ),
        (
            "running",
            run("running", shown="running (its last leg has not ended)"),
            POLICY,
            [],
            "running (its last leg has not ended)",
        ),
        (
            "paused at a gate",
            run("paused", shown="paused at gate ok"),
            POLICY,
            [],
            "paused at gate ok",
        ),
        (
            "waiting for a limit",
            run("paused", shown="waiting for a limit"),
            POLICY,
            [],
            "waiting for a limit",
        ),
        ("unreadable record", run("unreadable"), POLICY, [], "unreadable"),
        ("a live lease", run("passed", live_lease=True), POLICY, [], "a leg holds its lease now"),
        (
            "no run branch, old refs",
            run("absent", branch=None),
            POLICY,
            [n for n in SETTLED_GOES if n != BRANCH.name],
            "",
        ),
        (
            "no run branch, a young ref",
            run("absent", branch=None, others=(ref(NOTE.name, YOUNG),)),
            POLICY,
            [],
            "last changed 2 day(s) ago",
        ),
    ],
)
def test_a_runs_refs_go_only_when_it_is_settled_and_past_the_age(
    case: str, the_run: Run, policy: Policy, removed: list[str], why_kept: str
) -> None:
    verdicts = decide_run(the_run, policy)
    assert len(verdicts) == len({v.ref.name for v in verdicts}), "every ref judged once"
    assert {v.ref.name for v in verdicts} == {
        *(r.name for r in the_run.others),
        *([the_run.branch.name] if the_run.branch else []),
        *(x.name for ln in the_run.lanes for x in (ln.ref, ln.base) if x is not None),
    }, case
    assert [v.ref.name for v in verdicts if v.remove] == removed, case
    if why_kept:
        assert {v.why for v in verdicts} == {why_kept}, case
    if removed and the_run.branch is not None:
        assert verdicts[-1].ref == the_run.branch, "the run branch goes last"


def test_a_settled_runs_lanes_stay_when_their_work_is_nowhere_else_or_in_use() -> None:
    why = {v.ref.name: (v.remove, v.why) for v in decide_run(run("passed"), POLICY)}
    assert why[MERGED.ref.name] == (True, "passed, last changed 40 day(s) ago; its work is on main")
    assert why[UNMERGED.ref.name][0] is False and "on no other branch" in why[UNMERGED.ref.name][1]
    assert why["refs/omg/base/r/b"][0] is False  # a kept lane keeps where it started
    assert why[IN_USE.ref.name] == (False, "checked out at /w/.omg/c; `omg clean r` removes it")
    assert why[UNLOOKED.ref.name][0] is False  # not looked at is never taken for held


def book(kind: str, key: str, at: float = OLD, pr: str = "unknown") -> Book:
    return Book(ref(f"refs/omg/spend/{kind}/{key}", at), kind, key, pr)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("the_book", "policy", "removed", "why"),
    [
        (book("pr", "2", pr="closed"), POLICY, True, "pull request #2 is closed"),
        (book("pr", "2", YOUNG, pr="closed"), POLICY, False, "last changed 2 day(s) ago"),
        (book("pr", "3", pr="open"), POLICY, False, "pull request #3 is open"),
        (book("pr", "4"), POLICY, False, "the state of pull request #4 is unknown"),
        (book("pr", "4"), Policy(NOW, 0), False, "is unknown"),
        (book("day", "2026-12-04", NOW), Policy(NOW, 0), False, "may still be written"),
        (book("day", "2026-12-03", YOUNG), Policy(NOW, 0), False, "may still be written"),
        (book("day", "2026-12-02", YOUNG), Policy(NOW, 0), True, "ended"),
        (book("day", "2026-11-01"), POLICY, True, "the day 2026-11-01 ended 32 day(s) ago"),
        (book("day", "2026-11-10"), POLICY, False, "younger than the age"),
        (book("day", "2026-11-01", YOUNG), POLICY, False, "younger than the age"),  # written late
        (book("day", "not-a-day"), Policy(NOW, 0), False, "is not a day"),
    ],
)
def test_a_spend_book_goes_once_no_cap_reads_it(
    the_book: Book, policy: Policy, removed: bool, why: str
) -> None:
    verdict = decide_book(the_book, policy)
    assert verdict.remove is removed and why in verdict.why, verdict


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30d", 30 * DAY),
        ("12h", 43200.0),
        ("2w", 14 * DAY),
        ("0d", 0.0),
        (" 1.5d ", 1.5 * DAY),
    ],
)
def test_an_age_is_a_number_and_a_unit(text: str, seconds: float) -> None:
    assert age(text) == seconds


@pytest.mark.parametrize("text", ["30", "-1d", "d", "30 days", "1e9d", "30m", ""])
def test_anything_else_is_refused_with_the_form_to_write(text: str) -> None:
    with pytest.raises(UsageError, match=r"e\.g\. 30d"):
        age(text)
