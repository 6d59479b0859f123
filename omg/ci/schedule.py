"""A ``schedule`` event, planned — pure: with ``--on-schedule start``, today's run of the graph
(``schedule-<graph>-<YYYYMMDD>``, UTC), started once a day; otherwise (``continue``, the default)
continue the runs whose wait is over — paused for a provider's limit (from its conservative
earliest retry on: a limit still in force pauses it again, so the schedule polls) or at a day's
spend cap (from the next UTC day)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omg.ci.actions import Action, ContinueWaits, DropWait, Resume, Skip, Start
from omg.github.event import Schedule
from omg.leg.wait import sort_out
from omg.state.runid import dated_run_id

if TYPE_CHECKING:
    from omg.ci.facts import Facts
    from omg.leg.run import Run


def plan(t: Schedule, facts: Facts) -> Action:
    """What the scheduled job ``t`` does: start today's run, or continue the waiting ones."""
    if facts.args.on_schedule == "start":
        return today(facts)
    waits = facts.waits()
    due, damaged = sort_out(waits, facts.now())
    return ContinueWaits(tuple(due), tuple(damaged.items()), len(waits))


def today(facts: Facts) -> Action:
    """Today's run of the workflow's graph, started once a day; a second job that day continues
    it when it has work left, else says it ran."""
    graph, source = facts.graph()
    day = facts.now().strftime("%Y%m%d")
    rid = facts.args.run_id or dated_run_id(graph.name, day)
    if not facts.found(rid):
        return Start(graph, source, rid)
    state = facts.run(rid).state
    if state["status"] in ("passed", "failed", "superseded") or state["paused_at"]:
        where = f"paused at gate {state['paused_at']}" if state["paused_at"] else ""
        return Skip(
            f"today's scheduled run {rid} is {where or state['status']} already; the "
            "schedule starts no second run of the day (dispatch one with a run id to "
            "run again)",
            quiet=False,
        )
    return Resume(rid, None)


def waiting(rid: str, run: Run | None, push: str) -> DropWait | Resume:
    """The next leg of run ``rid``, which the remote records as waiting (``run``: None when its
    branch is gone); a run that no longer waits (superseded, decided, continued by hand) has
    its wait cleared instead."""
    if run is None:
        return DropWait(rid, f"run {rid} waits on {push}, but its branch is gone")
    state = run.state
    last = state["legs"][-1] if state["legs"] else None
    waits = last is not None and last.get("reason") in ("limit", "spend_cap")
    if state["status"] != "paused" or not waits:
        return DropWait(rid, f"run {rid} is {state['status']}: it waits for nothing any more")
    pr = state.get("pull_request")
    if pr is not None and pr.get("fork"):
        return DropWait(
            rid,
            f"run {rid} judges a fork's head: its next leg waits for a writer's /omg review "
            "(or /omg retry), never for the schedule",
        )
    return Resume(rid, pr["number"] if pr is not None else None)
