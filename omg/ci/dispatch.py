"""A ``workflow_dispatch`` event, planned — pure: continue run ``run-id`` (deciding ``gate`` with
``decision`` and ``reason``, or retrying with ``guidance``), or with ``graph`` (and no run-id,
or one not on the remote yet) start a new run of it on the dispatched ref."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from omg.ci.actions import Action, RefuseDecision, ReportOnly, Resume, Start, Supersede
from omg.errors import StateError, UsageError
from omg.github.event import Dispatch
from omg.leg.decisions import Decision, Guidance
from omg.state.runid import dispatched_run_id
from omg.words import visible

if TYPE_CHECKING:
    from omg.ci.context import LegArgs
    from omg.ci.facts import Facts


def args(t: Dispatch, given: LegArgs) -> LegArgs:
    """The job's arguments with the dispatch's ``graph`` input, when it names one."""
    graph_path = t.inputs.get("graph", "").strip()
    return replace(given, graph=Path(graph_path)) if graph_path else given


def plan(t: Dispatch, facts: Facts) -> Action:
    """What dispatch ``t`` asks of omg."""
    rid = t.inputs.get("run-id") or facts.args.run_id
    if (not rid or not facts.found(rid)) and t.inputs.get("graph", "").strip():
        graph, source = facts.graph()  # a new run of the graph, on the dispatched ref
        rid = rid or dispatched_run_id(graph.name, facts.workflow_run())
        return Start(graph, source, rid)
    if not rid:
        raise UsageError(
            "workflow_dispatch needs the run-id input (or --run-id / OMG_RUN_ID): "
            "which run to continue — or the graph input, to start a new run"
        )
    if not facts.found(rid):
        raise StateError(
            f"{facts.args.push} has no run {rid!r}; `git ls-remote {facts.args.push} "
            "'refs/heads/omg/runs/*'` lists the runs there"
        )
    state = facts.run(rid).state
    pr = state.get("pull_request")
    if pr is not None and state["status"] != "superseded":
        head = facts.pr_head(pr["number"])
        if head != pr["head_sha"]:
            return Supersede(rid, head, ReportOnly(rid, pr["number"]))
    gate, verdict = t.inputs.get("gate", ""), t.inputs.get("decision", "").lower()
    if verdict and verdict not in ("approve", "reject"):
        raise UsageError(f"decision input {verdict!r} must be approve or reject")
    if bool(gate) != bool(verdict):
        raise UsageError("the gate and decision inputs go together: name both or neither")
    decision = None
    actor = facts.gh.actor
    if gate:
        why = facts.refusal(actor, bot=actor.endswith("[bot]"), association=None, state=state)
        if why is not None:
            return RefuseDecision(rid, gate, verdict, actor, why)
        if verdict == "reject" and not visible(t.inputs.get("reason", "")):
            raise UsageError(
                "a reject needs the reason input: a rejection is recorded with why, in "
                "words that show"
            )
        decision = Decision(gate, verdict == "approve", actor, t.inputs.get("reason", ""))
    said = t.inputs.get("guidance", "").strip()
    retry = t.inputs.get("retry") == "true" or bool(said)  # guidance is for a retry
    if said and decision is not None:
        raise UsageError("the guidance input re-arms failed nodes; it takes no gate decision")
    words = Guidance(said, actor) if said else None
    number = pr["number"] if pr is not None else None
    return Resume(rid, number, decision=decision, retry=retry, guidance=words)
