"""A ``workflow_dispatch`` event, planned, as a table: a new run from the graph input, a run
continued, a gate decided (or refused), failed nodes retried with guidance, a moved PR."""

from __future__ import annotations

from pathlib import Path

import pytest

from omg.ci import dispatch
from omg.ci.actions import RefuseDecision, ReportOnly, Resume, Start, Supersede
from omg.errors import StateError, UsageError
from omg.github.event import Dispatch
from omg.leg.decisions import Decision, Guidance
from omg.state.runid import dispatched_run_id

from .table import BEFORE, GRAPH, HEAD, Table, args, state

PAUSED = state("r1", status="paused", paused_at="ok")
ON_PR = state("r1", status="paused", pull_request={"number": 7, "head_sha": HEAD})


def test_the_graph_input_names_the_graph_of_the_job() -> None:
    given = args(graph=Path("graphs/g.yaml"))
    assert dispatch.args(Dispatch({"graph": " other.yaml "}), given).graph == Path("other.yaml")
    assert dispatch.args(Dispatch({"run-id": "r1"}), given) is given


def test_the_graph_input_without_a_run_starts_one_named_for_the_workflow_run() -> None:
    facts = Table()
    got = dispatch.plan(Dispatch({"graph": "graphs/g.yaml"}), facts)
    assert got == Start(GRAPH, Path("graphs/g.yaml"), dispatched_run_id("g", "77"))
    assert facts.asked == ["graph"]


def test_a_run_id_the_remote_lacks_starts_with_the_graph_input() -> None:
    facts = Table()
    got = dispatch.plan(Dispatch({"graph": "graphs/g.yaml", "run-id": "mine"}), facts)
    assert isinstance(got, Start) and got.run_id == "mine"
    assert facts.asked == ["found mine", "graph"]


@pytest.mark.parametrize(
    ("inputs", "runs", "error", "said"),
    [
        ({}, {}, UsageError, "needs the run-id input"),
        ({"run-id": "r1"}, {}, StateError, "origin has no run 'r1'"),
        (
            {"run-id": "r1", "decision": "maybe", "gate": "ok"},
            {"r1": PAUSED},
            UsageError,
            "must be approve or reject",
        ),
        ({"run-id": "r1", "gate": "ok"}, {"r1": PAUSED}, UsageError, "go together"),
        ({"run-id": "r1", "decision": "approve"}, {"r1": PAUSED}, UsageError, "go together"),
        (
            {"run-id": "r1", "gate": "ok", "decision": "reject", "reason": " \u200b"},
            {"r1": PAUSED},
            UsageError,
            "a reject needs the reason input",
        ),
        (
            {"run-id": "r1", "gate": "ok", "decision": "approve", "guidance": "x"},
            {"r1": PAUSED},
            UsageError,
            "takes no gate decision",
        ),
    ],
    ids=[
        "no run",
        "a run the remote lacks",
        "a decision of another word",
        "a gate without a decision",
        "a decision without a gate",
        "a reject without words that show",
        "guidance with a decision",
    ],
)
def test_a_dispatch_that_says_nothing_omg_can_do_is_refused(
    inputs: dict[str, str], runs: dict[str, object], error: type[Exception], said: str
) -> None:
    with pytest.raises(error, match=said):
        dispatch.plan(Dispatch(inputs), Table(runs=runs))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("inputs", "want"),
    [
        ({"run-id": "r1"}, Resume("r1", None)),
        ({"run-id": "r1", "retry": "true"}, Resume("r1", None, retry=True)),
        (
            {"run-id": "r1", "guidance": " use v2 "},
            Resume("r1", None, retry=True, guidance=Guidance("use v2", "ann")),
        ),
        (
            {"run-id": "r1", "gate": "ok", "decision": "Approve"},
            Resume("r1", None, decision=Decision("ok", True, "ann", "")),
        ),
        (
            {"run-id": "r1", "gate": "ok", "decision": "reject", "reason": "no"},
            Resume("r1", None, decision=Decision("ok", False, "ann", "no")),
        ),
    ],
    ids=["continue", "retry", "guidance retries", "approve", "reject with a reason"],
)
def test_a_dispatch_continues_decides_or_retries_the_run(
    inputs: dict[str, str], want: Resume
) -> None:
    assert dispatch.plan(Dispatch(inputs), Table(runs={"r1": PAUSED})) == want


def test_a_decision_by_someone_who_may_not_decide_is_recorded_and_refused() -> None:
    facts = Table(runs={"r1": PAUSED}, refused="ann is not one of this graph's approvers")
    got = dispatch.plan(Dispatch({"run-id": "r1", "gate": "ok", "decision": "approve"}), facts)
    assert got == RefuseDecision("r1", "ok", "approve", "ann", facts.refused)  # type: ignore[arg-type]


def test_who_decides_is_asked_only_for_a_decision() -> None:
    facts = Table(runs={"r1": PAUSED})
    dispatch.plan(Dispatch({"run-id": "r1", "retry": "true"}), facts)
    assert not any(q.startswith("refusal") for q in facts.asked)


def test_a_run_whose_pull_request_moved_on_is_superseded_and_reported() -> None:
    facts = Table(runs={"r1": ON_PR}, heads={7: BEFORE})
    got = dispatch.plan(Dispatch({"run-id": "r1"}), facts)
    assert got == Supersede("r1", BEFORE, ReportOnly("r1", 7))
    same = dispatch.plan(Dispatch({"run-id": "r1"}), Table(runs={"r1": ON_PR}, heads={7: HEAD}))
    assert same == Resume("r1", 7)
