"""A leg's spend booked on the remote's spend books by the job that writes, from the verified
record it landed — the publish job's leg, the fold's wave — never from books a job that ran the
nodes hands over (they never cross)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omg.errors import OmgError

if TYPE_CHECKING:
    from omg.ci.context import JobContext
    from omg.leg.run import Run


def book_spend(ctx: JobContext, run: Run, seq: int) -> bool:
    """This leg's spend appended to the remote's books, from the verified record — the events
    after ``seq`` (this job's plan) — never from the run job's books, which never cross; False
    (said, and the job fails once it has reported) when a book could not be written."""
    from omg import spendbook
    from omg.leg.caps import CapGuard, SpendCaps

    state = run.state
    graph = state["graph"]
    caps = (ctx.args.limits.caps or SpendCaps()).over(
        graph.get("pr_budget_usd"), graph.get("day_budget_usd")
    )
    budgets = {n["id"]: float(n.get("budget_usd") or 0.0) for n in graph.get("nodes", [])}
    events = (ev for ev in run.rundir.read_events() if int(ev["seq"]) > seq)
    spent = spendbook.recorded(run.rundir.run_id, events, budgets)
    if not caps or not spent:
        return True
    pr = state.get("pull_request")
    try:
        CapGuard(
            repo=ctx.runs.commits(run.rundir.run_id).repo, remote=ctx.args.push,
            run_id=run.rundir.run_id, caps=caps, pr=pr["number"] if pr is not None else None,
            approved=lambda: 0.0, rehearsal=bool(state.get("rehearsal")),
        ).book_spent(spent)  # fmt: skip
    except OmgError as exc:
        ctx.say(f"omg: the spend of run {run.rundir.run_id} was not booked: {exc}")
        return False
    return True
