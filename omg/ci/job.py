"""One GitHub Actions job of omg, from its front door: read the trigger, plan what it asks (one
pure planner per trigger), act on the plan, and end with an outcome (`cli/` picks the exit
code and hands in the printers)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from omg.ci import dispatch, fanout
from omg.ci.act import act
from omg.ci.context import JobContext, LegArgs, Say
from omg.ci.look import Look
from omg.ci.planners import plan
from omg.errors import UsageError
from omg.github.env import actions
from omg.github.event import Dispatch, PullRequest, read_trigger
from omg.kinds import JobOutcome


def leg(args: LegArgs, environ: Mapping[str, str], say: Say, annotate: Say) -> JobOutcome:
    """`omg leg`: the job GitHub started on a pull request, a comment, a dispatch or a schedule."""
    ctx = JobContext.of(actions(environ), args, environ, say, annotate)
    trigger = read_trigger(ctx.gh.event_name, ctx.gh.event_path)
    if isinstance(trigger, PullRequest):  # where dispatched legs run
        ctx = replace(ctx, default_branch=trigger.default_branch)
    if isinstance(trigger, Dispatch):  # its graph input names the graph
        ctx = replace(ctx, args=dispatch.args(trigger, ctx.args))
    look = Look(ctx)
    outcome = act(ctx, look, plan(trigger, look))
    if args.hand_off is not None:  # the run job: its writes go to the publish job
        from omg.ci.runjob import hand_off

        ctx.say(f"omg: {hand_off(ctx, args.hand_off) or 'no run reported: nothing handed off'}")
    return outcome


def wave(args: LegArgs, environ: Mapping[str, str], say: Say, annotate: Say) -> JobOutcome:
    """`omg leg --node ID` or `--fold`: a job of a fan-out wave, on the run its ``--run-id`` (or
    its dispatch's ``run-id`` input) names."""
    if args.node and args.fold:
        raise UsageError("--node runs a matrix entry and --fold the job after them: pick one")
    if args.fold and args.hand_off is not None:  # the fold takes the entries' hand-offs in
        args = replace(args, hand_off=None, entries=args.hand_off)
    ctx = JobContext.of(actions(environ), args, environ, say, annotate)
    rid = args.run_id
    if not rid:
        trigger = read_trigger(ctx.gh.event_name, ctx.gh.event_path)
        rid = trigger.inputs.get("run-id", "") if isinstance(trigger, Dispatch) else ""
    look = Look(ctx)
    return act(ctx, look, fanout.plan(rid or "", look))
