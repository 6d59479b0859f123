"""A fan-out wave's jobs, planned — pure: a matrix job runs its entry (`omg leg --node ID`), and
the job after the matrix folds the wave's records in and dispatches the next wave
(`omg leg --fold`) unless two waves in a row published nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omg.ci.actions import Fold, RunEntry
from omg.errors import StateError, UsageError
from omg.state import State

if TYPE_CHECKING:
    from omg.ci.facts import Facts
    from omg.leg.start import LegEnd


def plan(rid: str, facts: Facts) -> RunEntry | Fold:
    """The job of run ``rid`` (the ``--run-id``, or the dispatch's ``run-id`` input) this is."""
    if not rid:
        raise UsageError("a fan-out job needs the run: pass --run-id (or OMG_RUN_ID)")
    if not facts.found(rid):
        raise StateError(
            f"{facts.args.push} has no run {rid!r}; the plan job starts it with "
            f"`omg plan {rid} --matrix --fetch {facts.args.push} --start GRAPH`"
        )
    if facts.args.node:
        return RunEntry(rid, facts.args.node)
    return Fold(rid)


def stuck(end: LegEnd | None, before: State) -> str:
    """Why not to dispatch the next wave: two waves in a row that published nothing ('' when
    the fold took something in, now or the wave before)."""
    if end is None or not end.state["legs"]:
        return ""
    now = end.state["legs"][-1].get("fanout", {})
    last = before["legs"][-1].get("fanout") if before["legs"] else None
    if now.get("folded") or last is None or last.get("folded"):
        return ""
    return (
        "two waves in a row published nothing, so no next wave was dispatched; see the "
        "matrix jobs' logs, then dispatch omg-fanout again with this run-id"
    )
