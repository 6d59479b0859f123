"""A ``pull_request`` event, planned, as a table: which actions start or continue a run, what a
fork or a draft gets, a PR that adds its graph, and a new head superseding the previous one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from omg.ci import pull_request
from omg.ci.actions import Leg, NotRun, Resume, Skip, Start, Supersede
from omg.errors import StateError
from omg.github.event import PullRequest
from omg.leg.run import Run
from omg.state.runid import pr_run_id
from omg.state.store import RunDir

from .table import BASE, BEFORE, GRAPH, HEAD, Table, args, leg, state

PR = PullRequest("opened", 7, HEAD, "topic", "", False, False, "main", BASE, "main")
RID = pr_run_id(7, "g", HEAD)
OLD = pr_run_id(7, "g", BEFORE)


@pytest.mark.parametrize(
    ("event", "why", "said"),
    [
        (replace(PR, action="closed"), "pull_request closed: omg runs on opened", False),
        (replace(PR, action="edited"), "omg runs on opened, synchronize, reopened", False),
        (replace(PR, fork=True), "comes from a fork", True),
        (replace(PR, draft=True), "is a draft", False),
    ],
    ids=["closed", "edited", "a fork", "a draft"],
)
def test_an_event_omg_does_not_run_on_is_skipped_having_read_nothing(
    event: PullRequest, why: str, said: bool
) -> None:
    facts = Table()
    got = pull_request.plan(event, facts)
    assert isinstance(got, Skip) and why in got.why and got.quiet is not said
    assert facts.asked == []


def test_a_forks_event_says_a_writers_review_runs_it() -> None:
    got = pull_request.plan(replace(PR, fork=True), Table())
    said = "a person with write access can comment `/omg review`"
    assert isinstance(got, Skip) and said in got.why


def test_a_draft_made_ready_for_review_runs() -> None:
    got = pull_request.plan(replace(PR, draft=True, action="ready_for_review"), Table())
    assert isinstance(got, Leg) and got.run_id == RID


def test_a_pr_runs_its_heads_run_judged_by_its_bases_graph() -> None:
    facts = Table()
    got = pull_request.plan(PR, facts)
    assert isinstance(got, Leg) and (got.run_id, got.head) == (RID, HEAD)
    assert got.start.graph is GRAPH and got.start.number == 7
    assert got.start.pr is not None and got.start.pr["base_sha"] == BASE
    assert facts.asked == ["pr_graph"], "the run on the remote is looked up when acted on"


def test_a_pr_that_adds_its_graph_is_reported_not_run() -> None:
    got = pull_request.plan(PR, Table(base_graph=None))
    assert isinstance(got, NotRun) and got.number == 7


def test_a_push_supersedes_the_previous_heads_run_first() -> None:
    got = pull_request.plan(replace(PR, action="synchronize", before=BEFORE), Table())
    assert isinstance(got, Supersede) and (got.run_id, got.head) == (OLD, HEAD)
    assert isinstance(got.then, Leg) and got.then.run_id == RID


@pytest.mark.parametrize("before", ["", HEAD], ids=["no before", "the same head"])
def test_no_previous_head_supersedes_nothing(before: str) -> None:
    assert isinstance(pull_request.plan(replace(PR, before=before), Table()), Leg)


def test_a_run_id_given_to_the_job_names_the_run_and_supersedes_nothing() -> None:
    facts = Table(args=args(run_id="mine"))
    got = pull_request.plan(replace(PR, action="synchronize", before=BEFORE), facts)
    assert isinstance(got, Leg) and got.run_id == "mine"


def _run(**fields: object) -> Run:
    return Run(RunDir(RID), state(RID, **fields))  # type: ignore[arg-type]


def test_the_heads_leg_starts_a_new_run_or_resumes_the_one_on_the_remote() -> None:
    planned = pull_request.plan(PR, Table())
    assert isinstance(planned, Leg)
    assert pull_request.next_leg(planned, None) == planned.start
    judged = _run(pull_request={"number": 7, "head_sha": HEAD})
    assert pull_request.next_leg(planned, judged) == Resume(RID, 7)


def test_a_run_that_judges_another_head_is_refused() -> None:
    planned = pull_request.plan(PR, Table())
    assert isinstance(planned, Leg)
    other = _run(pull_request={"number": 7, "head_sha": BEFORE})
    with pytest.raises(StateError, match="leave --run-id unset"):
        pull_request.next_leg(planned, other)


@pytest.mark.parametrize(
    ("fields", "want"),
    [
        ({"status": "passed"}, "settled"),
        ({"status": "failed"}, "settled"),
        ({"status": "superseded"}, "settled"),
        ({"status": "running", "legs": [leg(None)]}, "note"),  # a leg may be running it
        ({"status": "paused", "legs": [leg("paused", "gate")]}, "on_branch"),
        ({"status": "running", "legs": []}, "on_branch"),
    ],
    ids=["passed", "failed", "superseded", "a leg open", "at rest at a gate", "no leg yet"],
)
def test_a_previous_heads_run_is_superseded_as_it_stands(
    fields: dict[str, object], want: str
) -> None:
    assert pull_request.superseding(state("old", **fields)) == want  # type: ignore[arg-type]


def test_the_start_of_a_new_heads_run_records_the_pull_request() -> None:
    planned = pull_request.plan(PR, Table())
    assert isinstance(planned, Leg) and isinstance(planned.start, Start)
    assert planned.start.pr == {"number": 7, "head_sha": HEAD, "base_ref": "main", "base_sha": BASE}
