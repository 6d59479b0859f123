"""A ``schedule`` event, planned, as a table: today's run started once a day, and the runs whose
wait is over continued — a run that waits for nothing any more has its wait cleared."""

from __future__ import annotations

from pathlib import Path

import pytest

from omg.ci import schedule
from omg.ci.actions import ContinueWaits, DropWait, Resume, Skip, Start
from omg.errors import Unreadable
from omg.github.event import Schedule
from omg.leg.run import Run
from omg.state.store import RunDir

from .table import GRAPH, Table, args, leg, state

TODAY = "schedule-g-20260304"
START = args(on_schedule="start")


def test_the_first_job_of_the_day_starts_todays_run() -> None:
    got = schedule.plan(Schedule("0 6 * * *"), Table(args=START))
    assert got == Start(GRAPH, Path("graphs/g.yaml"), TODAY)


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"status": "passed"}, "is passed already"),
        ({"status": "failed"}, "is failed already"),
        ({"status": "paused", "paused_at": "ok"}, "is paused at gate ok already"),
    ],
)
def test_a_later_job_that_day_starts_no_second_run(fields: dict[str, object], said: str) -> None:
    facts = Table(args=START, runs={TODAY: state(TODAY, **fields)})  # type: ignore[arg-type]
    got = schedule.plan(Schedule(), facts)
    assert isinstance(got, Skip) and said in got.why and not got.quiet


def test_a_later_job_that_day_continues_todays_run_with_work_left() -> None:
    facts = Table(args=START, runs={TODAY: state(TODAY, status="paused")})
    assert schedule.plan(Schedule(), facts) == Resume(TODAY, None)


def test_by_default_the_runs_whose_wait_is_over_are_continued() -> None:
    waits: dict[str, bytes | Unreadable] = {
        "b": b'{"not_before": "2026-03-04T11:00:00Z"}',  # over at noon
        "later": b'{"not_before": "2026-03-04T13:00:00Z"}',
        "bad": Unreadable("refs/omg/waits/bad", "c" * 40, "is a directory"),
    }
    facts = Table(waiting=waits)
    got = schedule.plan(Schedule(), facts)
    assert isinstance(got, ContinueWaits) and got.waiting == 3 and got.due == ("b",)
    assert [rid for rid, _ in got.damaged] == ["bad"]
    assert facts.asked == ["waits"], "no graph is read to continue waiting runs"


def _run(rid: str, **fields: object) -> Run:
    return Run(RunDir(rid), state(rid, **fields))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("run", "want"),
    [
        (None, "waits on origin, but its branch is gone"),
        (_run("w", status="passed"), "is passed: it waits for nothing any more"),
        (_run("w", status="paused", legs=[leg("paused", "gate")]), "waits for nothing any more"),
    ],
    ids=["its branch is gone", "settled", "paused at a gate since"],
)
def test_a_run_that_waits_for_nothing_has_its_wait_cleared(run: Run | None, want: str) -> None:
    got = schedule.waiting("w", run, "origin")
    assert isinstance(got, DropWait) and want in got.why


@pytest.mark.parametrize("reason", ["limit", "spend_cap"])
def test_a_run_paused_for_a_limit_or_a_days_cap_gets_its_next_leg(reason: str) -> None:
    paused = _run("w", status="paused", legs=[leg("paused", reason)],
                  pull_request={"number": 3, "head_sha": "h"})  # fmt: skip
    assert schedule.waiting("w", paused, "origin") == Resume("w", 3)


@pytest.mark.parametrize("reason", ["limit", "spend_cap"])
def test_a_forks_run_is_never_continued_by_the_schedule(reason: str) -> None:
    paused = _run("w", status="paused", legs=[leg("paused", reason)],
                  pull_request={"number": 3, "head_sha": "h", "fork": True})  # fmt: skip
    got = schedule.waiting("w", paused, "origin")
    assert isinstance(got, DropWait) and "waits for a writer's /omg review" in got.why
