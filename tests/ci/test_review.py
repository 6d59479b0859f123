"""`/omg review`, planned, as tables: who may ask, what the job reads to know (the pull request
through the API, the base's graph, the runs of the PR), and what it does — a run started on
the head (a fork's marked so), earlier heads superseded, a waiting run continued, any other
reported — and each try's decision on a run that waits for its next leg."""

from __future__ import annotations

import pytest

from omg.ci.actions import (
    Action,
    Apply,
    NotRun,
    Refuse,
    Reply,
    ReportOnly,
    Resume,
    Start,
    Supersede,
    To,
)
from omg.ci.comment import decide, plan, waits_for_a_leg
from omg.github.command import Command, parse
from omg.github.event import Comment
from omg.records import PullRequestRecord
from omg.state import State
from omg.state.runid import pr_run_id

from .table import BASE, GRAPH, Table, leg, state

HEAD = "d" * 40
OLD = "e" * 40
RID = pr_run_id(7, "g", HEAD)
EARLIER = pr_run_id(7, "g", OLD)
REVIEW = Command("review", text="/omg review")
TO = To(7, 99, "ann")
ASKED = ["writer ann", "pull 7", "pr_graph", f"found {RID}"]


def comment(body: str = "/omg review", **kw: object) -> Comment:
    given = {"action": "created", "number": 7, "on_pull_request": True, "comment_id": 99,
             "body": body, "login": "ann", "association": "MEMBER", "bot": False}  # fmt: skip
    return Comment(**{**given, **kw})  # type: ignore[arg-type]


def started(*, fork: bool) -> Start:
    pr: PullRequestRecord = {"number": 7, "head_sha": HEAD, "base_ref": "main", "base_sha": BASE}
    if fork:
        pr["fork"] = True
    return Start(GRAPH, GRAPH_FILE, RID, pr, sha256="s" * 64)


GRAPH_FILE = Table().graph_file[1]
OUT_OF_TIME = state(RID, status="paused", legs=[leg("paused", "leg_budget")])
AT_A_LIMIT = state(RID, status="paused", legs=[leg("paused", "limit")])
AT_A_CAP = state(RID, status="paused", legs=[leg("paused", "spend_cap")])
AT_A_GATE = state(RID, status="paused", paused_at="review", legs=[leg("paused", "gate")])
PASSED = state(RID, status="passed", legs=[leg("passed")])


def test_review_is_a_command_of_its_own() -> None:
    assert parse("/omg review") == REVIEW
    assert parse("/OMG Review please") == Command("review", text="/OMG Review please")


@pytest.mark.parametrize("fork", [True, False], ids=["a fork", "a branch of the repository"])
def test_a_writers_review_starts_a_run_on_the_head_the_api_names(fork: bool) -> None:
    table = Table(heads={7: HEAD}, forks={7} if fork else set())
    assert plan(comment(), table) == started(fork=fork)
    assert table.asked == [*ASKED, "pr_runs 7"]


@pytest.mark.parametrize(
    ("association", "bot", "why"),
    [("NONE", False, "ann is none here"), ("MEMBER", True, "ann is a bot account"),
     ("MEMBER", False, "ann has read access to the repository")],
    ids=["a reader", "a bot", "a member who may only read"],
)  # fmt: skip
def test_who_may_not_write_is_refused_sparingly_and_nothing_is_read(
    association: str, bot: bool, why: str
) -> None:
    table = Table(heads={7: HEAD}, not_writer=why)
    got = plan(comment(association=association, bot=bot), table)
    assert isinstance(got, Reply) and got.to == To(7, 99, "ann", quiet=True)
    assert "omg refused `/omg review`" in got.text and why in got.text
    assert "nothing runs" in got.text
    assert table.asked == ["writer ann"], "no pull request, graph or run is read for a refusal"


def test_a_review_bound_to_a_head_runs_only_that_head() -> None:
    assert parse("/omg review @DDDDDDD") == Command(
        "review", ref="ddddddd", text="/omg review @DDDDDDD"
    )
    table = Table(heads={7: HEAD}, forks={7})
    assert plan(comment(f"/omg review @{HEAD}"), table) == started(fork=True)
    table = Table(heads={7: HEAD}, forks={7})
    got = plan(comment(f"/omg review @{OLD[:7]}"), table)  # the fork pushed since
    assert isinstance(got, Reply) and got.to == TO and "omg did not run" in got.text
    assert f"it moved since; look at the new head, then comment `/omg review @{HEAD}`" in got.text
    assert table.asked == ["writer ann", "pull 7"], "nothing is run or read past the head"


def test_a_review_of_a_closed_pull_request_runs_nothing() -> None:
    table = Table(heads={7: HEAD}, closed={7})
    got = plan(comment(), table)
    assert isinstance(got, Reply) and "PR #7 is closed" in got.text and "nothing runs" in got.text
    assert table.asked == ["writer ann", "pull 7"]


def test_a_review_of_a_new_head_supersedes_the_runs_of_earlier_heads() -> None:
    table = Table(heads={7: HEAD}, forks={7}, runs={EARLIER: PASSED, "pr-70-g-1234567": PASSED})
    assert plan(comment(), table) == Supersede(EARLIER, HEAD, started(fork=True))


@pytest.mark.parametrize(
    ("run", "want"),
    [
        (OUT_OF_TIME, Apply(RID, TO, REVIEW, None)),
        (AT_A_LIMIT, Apply(RID, TO, REVIEW, None)),
        (AT_A_CAP, "reports it as /omg status does"),
        (AT_A_GATE, "reports it as /omg status does"),
        (PASSED, "reports it as /omg status does"),
    ],
    ids=["out of time", "at a provider's limit", "at a spend cap", "at a gate", "settled"],
)
def test_a_review_of_a_head_with_a_run_continues_it_only_when_it_waits_for_a_leg(
    run: State, want: Action | str
) -> None:
    table = Table(heads={7: HEAD}, forks={7}, runs={RID: run})
    got = plan(comment(), table)
    if isinstance(want, str):
        assert isinstance(got, ReportOnly) and got.to == TO and want in got.note, got
    else:
        assert got == want
    assert table.asked == [*ASKED, f"run {RID}"]


def test_a_review_of_a_pr_whose_base_lacks_the_graph_reports_the_new_graph() -> None:
    table = Table(heads={7: HEAD}, base_graph=None)
    assert isinstance(plan(comment(), table), NotRun)


@pytest.mark.parametrize(
    ("run", "carrier", "want"),
    [
        (OUT_OF_TIME, "", Resume(RID, 7, contest=True)),
        (OUT_OF_TIME, "workflow run 5", "is running leg"),
    ],
    ids=["the next leg", "a leg running elsewhere"],
)
def test_each_try_of_a_review_on_a_waiting_run_resumes_it_unless_a_leg_runs(
    run: State, carrier: str, want: Action | str
) -> None:
    got = decide(
        Apply(RID, TO, REVIEW, None), run, carrier=carrier, state_at=lambda ref: None,
        progress=lambda: 0, recorded=lambda command: False,
    )  # fmt: skip
    if isinstance(want, str):
        assert isinstance(got, Refuse) and want in got.why, got
    else:
        assert got == want


@pytest.mark.parametrize(
    ("run", "waits"),
    [(OUT_OF_TIME, True), (AT_A_LIMIT, True), (AT_A_CAP, False), (AT_A_GATE, False),
     (PASSED, False), (state(RID, status="running"), False)],
    ids=["out of time", "a limit", "a cap", "a gate", "settled", "never ran a leg"],
)  # fmt: skip
def test_a_run_waits_for_a_leg_only_when_nothing_but_a_leg_moves_it(
    run: State, waits: bool
) -> None:
    assert waits_for_a_leg(run) is waits
