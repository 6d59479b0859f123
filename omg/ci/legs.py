"""A job's leg, run through `leg/`: a new run started or a run resumed, stamped with the job
that carries it, its head's status pending and its progress shown live on the pull request.
A lost race (MovedOn) reaches `ci/act`, which alone decides what it means."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from omg.ci.actions import ApproveSpend, Resume, Start
from omg.ci.report_md import Situation
from omg.ci.status import show_status
from omg.errors import RunFailed, StateError, UsageError
from omg.graph.model import Graph
from omg.leg.run import Run, open_run
from omg.records import PullRequestRecord
from omg.state.events import EventFields
from omg.state.store import RunDir

if TYPE_CHECKING:
    from omg.ci.context import JobContext
    from omg.leg.start import Environment, LegEnd


def progress_interval(environ: Mapping[str, str]) -> float:
    """``OMG_PROGRESS_SECONDS``: the least time between two live updates (default 20)."""
    from omg.ci.pace import INTERVAL

    raw = environ.get("OMG_PROGRESS_SECONDS", "").strip()
    if not raw:
        return INTERVAL
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise UsageError(
            f"OMG_PROGRESS_SECONDS={raw!r} is not a number of seconds; unset it for the default "
            f"of {INTERVAL:.0f}"
        ) from None


def start(ctx: JobContext, a: Start) -> LegEnd:
    """A new run's first leg."""
    from omg.leg.start import start_run

    stamp: EventFields = {**ctx.stamp()}
    ctx.say(f"omg: starting run {a.run_id} of {a.graph.name!r}")
    env = ctx.runs.environment(a.run_id)
    if a.pr is not None:
        stamp["pull_request"] = a.pr
        assert env.commits is not None
        env.commits.workspace.base = ctx.runs.pr_base(env.commits.repo, a.pr)  # lanes: head
        show_status(ctx, a.pr["head_sha"], a.graph.name, Situation("running"), leg=1, pr=a.pr)
        watch(ctx, a.run_id, env, a.graph, a.pr, leg=1)
    return start_run(
        a.graph,
        a.source,
        ctx.args.inputs,
        env,
        ctx.args.limits,
        run_id=a.run_id,
        stamp=stamp,
        source_sha256=a.sha256,
    )


def resume(ctx: JobContext, a: Resume | ApproveSpend, run: Run | None = None) -> LegEnd | None:
    """The run's next leg; None when nothing may run (said in the report's note). ``run``: the
    run as the planner saw it, unchanged since."""
    from omg.leg.start import resume_run

    rid = a.run_id
    run = run or open_run(ctx.args.runs_dir, rid)
    state = run.state
    decision = a.decision if isinstance(a, Resume) else None
    retry = isinstance(a, Resume) and a.retry
    if isinstance(a, Resume) and a.quiet_if_paused and state["paused_at"] and decision is None:
        return None
    if state["status"] == "superseded":
        ctx.notes.append(f"run {rid} was superseded; nothing more runs on it")
        return None
    if state["paused_at"] and decision is None and not retry:
        ctx.notes.append(f"run {rid} waits at gate {state['paused_at']}")
        return None
    ctx.say(f"omg: continuing run {rid}")
    pr = state.get("pull_request")
    leg = len(state["legs"]) + 1
    if pr is not None:
        name = str(state["graph"].get("name") or "")
        show_status(ctx, pr["head_sha"], name, Situation("running"), leg=leg, pr=pr)
    env = ctx.runs.environment(rid, run)
    if pr is not None:
        watch(ctx, rid, env, run.graph, pr, leg=leg, events=run.rundir)
    stamp = ctx.stamp()
    if isinstance(a, ApproveSpend):
        stamp = {**stamp, "approved_usd": a.usd, "by": a.by, "command": a.command}
    try:
        return resume_run(
            rid,
            env,
            ctx.args.limits,
            retry_failed=retry,
            decision=decision,
            stamp=stamp,
            guidance=a.guidance if isinstance(a, Resume) else None,
        )
    except RunFailed as exc:  # a failed run: report it, do not refuse the job
        ctx.notes.append(str(exc))
        return None
    except StateError as exc:
        if open_run(ctx.args.runs_dir, rid).state["status"] == "superseded":
            ctx.notes.append(str(exc))  # a note folded in at the leg's start said so
            return None
        raise


def watch(
    ctx: JobContext,
    rid: str,
    env: Environment,
    graph: Graph,
    pr: PullRequestRecord,
    *,
    leg: int,
    events: RunDir | None = None,
) -> None:
    """Hand the leg's recorder a listener that shows its progress on the PR as it goes."""
    from omg.ci.live import LiveReport
    from omg.leg.start import leg_mask

    live = LiveReport(
        ctx.api,
        graph,
        pr["head_sha"],
        pr["number"],
        ctx.links(rid),
        leg_mask(env, graph),
        list(events.read_events()) if events is not None else [],
        leg,
        interval=progress_interval(ctx.environ),
        say=ctx.say,
    )
    env.listeners = [*env.listeners, live]
