"""A leg split in two jobs. The run job's end (`hand_off`, `omg leg --hand-off DIR`): the leg's
commits and what it would have published (``publisher``) bundled for the next job. The publish
job (`omg publish DIR`): it runs no node and no code of the pull request; it plans the trigger
itself, asks the remote where the run's refs stand, verifies the run job's hand-off against
that (`handoff.verify`), and only then pushes the run and sends what the leg wanted published —
each part checked against what this job expects. A refused hand-off lands nothing: a failure
status and a comment say why, and the job is refused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import cast

from omg.ci.actions import Action, Leg, Supersede
from omg.ci.context import JobContext, LegArgs, Say
from omg.ci.handoff import Canaries, Expected, Plan, Publish, Refused, apply, bundle, verify
from omg.ci.look import Look
from omg.ci.publisher import Recorder
from omg.ci.report_md import marker
from omg.errors import StateError, UsageError
from omg.github.commitstatus import context
from omg.github.env import actions
from omg.github.event import PullRequest, read_trigger
from omg.github.markdown import code
from omg.kinds import JobOutcome
from omg.state.events import EventFields

#: The variable holding the SHA-256 digests (hex, one a line) of the model keys the run job
#: held: the publish job holds no key, yet refuses a hand-off that carries one.
DIGESTS = "OMG_SECRET_DIGESTS"


class HandoffRefused(StateError):
    """The run job's hand-off was refused; nothing of it was written."""


def publish(
    artifact: Path, args: LegArgs, environ: Mapping[str, str], say: Say, annotate: Say
) -> JobOutcome:
    """`omg publish DIR`: verify the hand-off in ``artifact``, then push and publish it."""
    ctx = JobContext.of(actions(environ), args, environ, say, annotate)
    trigger = read_trigger(ctx.gh.event_name, ctx.gh.event_path)
    if not isinstance(trigger, PullRequest):
        raise UsageError(
            f"omg publish takes a pull_request leg's hand-off; a {ctx.gh.event_name} leg runs "
            "in one job (the action's `job: both`)"
        )
    if not artifact.exists() or (artifact.is_dir() and not any(artifact.iterdir())):
        say("omg: the run job handed nothing off (it ran no leg): nothing to publish")
        return "clean"
    ctx = replace(ctx, default_branch=trigger.default_branch)
    leg = _leg(_planned(ctx, trigger))
    expected = _expected(ctx, leg, trigger.head_sha)
    found = verify(artifact, Path.cwd(), expected)
    graph = leg.start.graph.name
    if isinstance(found, Refused):
        _refused(ctx, found, trigger.number, trigger.head_sha, graph)
        raise HandoffRefused(found.message)
    apply(found, args.push, ctx.runs.tokens)
    say(
        f"omg: run {found.run_id} leg {found.leg}: pushed {len(found.moves)} refs "
        f"({found.objects} objects, {found.pack_bytes:,} bytes)"
    )
    _send(ctx, found.publish, found.run_id, trigger.number, graph)
    return "clean"


def _planned(ctx: JobContext, trigger: PullRequest) -> Action:
    from omg.ci import pull_request

    return pull_request.plan(trigger, Look(ctx))


def _leg(a: Action) -> Leg:
    """The leg the trigger plans (through a supersede of the previous head's run)."""
    if isinstance(a, Supersede):
        a = a.then
    if not isinstance(a, Leg):
        raise HandoffRefused(
            f"this event plans no leg ({type(a).__name__}), so no hand-off is taken from it"
        )
    return a


def _expected(ctx: JobContext, leg: Leg, head: str) -> Expected:
    """What this job planned, from its own view: the trigger's run and head, the refs as the
    remote holds them, the checkout, the workflow a leg may dispatch, the job's secrets."""
    from omg.git.pack import head_commit, remote_run_refs

    rid, root = leg.run_id, Path.cwd()
    refs = remote_run_refs(root, ctx.args.push, rid, ctx.runs.tokens)
    workflow = ctx.args.dispatch_workflow or ctx.gh.workflow_file
    values = [value for _, value, _ in ctx.runs.tokens]
    digests = ctx.environ.get(DIGESTS, "").split()
    return Expected(
        run_id=rid,
        graph=leg.start.graph.name,
        refs=dict(refs),
        base=(head_commit(root), head),
        head=head,
        workflows=frozenset({workflow} if workflow else ()),
        canaries=Canaries.of(values, digests),
    )


def _refused(ctx: JobContext, refused: Refused, number: int, head: str, graph: str) -> None:
    """A clear failure on the pull request: its head's status, and the sticky comment."""
    ctx.say(f"omg: {refused.message}")
    ctx.api.set_status(
        head, context(graph), "failure", f"the leg's output was refused ({refused.reason})",
        ctx.gh.run_url,
    )  # fmt: skip
    m = marker(number, graph)
    body = (
        f"{m}\n### omg · the leg's output was refused\n\nThe publish job refused what the run "
        f"job handed it ({refused.reason}): {code(refused.where)} {code(refused.why)}. Nothing "
        f"of it was pushed or published. [The workflow run]({ctx.gh.run_url})\n"
    )
    ctx.api.upsert_comment(number, m, body)


def _send(ctx: JobContext, p: Publish, rid: str, number: int, graph: str) -> None:
    """The verified leg's comment, status, dispatch and notes (verify held each to the plan)."""
    if p["comment"] is not None:
        m = marker(number, graph)
        body = p["comment"]["body"]
        ctx.api.upsert_comment(number, m, body if body.startswith(m) else f"{m}\n{body}")
    if p["status"] is not None:
        s = p["status"]
        ctx.api.set_status(s["sha"], s["context"], s["state"], s["description"], ctx.gh.run_url)
    sent: dict[str, str] = {}
    if p["dispatch"] is not None:
        d = p["dispatch"]
        sent = ctx.api.dispatch(d["workflow"], d["ref"], d["inputs"], title=rid)
    if p["notes"]:
        ctx.runs.fetch(rid, replace=True)
    for n in p["notes"]:
        fields = {**n["fields"], **sent} if n["event"] == "leg_dispatched" else n["fields"]
        # a note is checked as it is written: one the run could not fold back in is refused
        ctx.runs.note(rid, n["event"], cast(EventFields, fields), n["event"], n["id"])


def hand_off(ctx: JobContext, out: Path) -> str:
    """Bundle the run this job reported on last into ``out``: its commits (and its lanes')
    down to where the remote holds them, and what the job would have published; what was
    handed off, in a line ('' when the job reported on no run: nothing is written)."""
    from omg.git.pack import head_commit, remote_run_refs
    from omg.leg.run import open_run

    if not ctx.reported:
        return ""
    rid = ctx.reported[-1]
    state = open_run(ctx.args.runs_dir, rid).state
    root = Path.cwd()
    olds: dict[str, str | None] = dict(remote_run_refs(root, ctx.args.push, rid, ctx.runs.tokens))
    base = [head_commit(root)]
    pr = state.get("pull_request")
    if pr is not None:
        base.append(pr["head_sha"])
    assert isinstance(ctx.api, Recorder)  # the run job's GitHub records its writes
    publish = ctx.api.publish
    publish["notes"] = list(ctx.runs.noted.get(rid, []))
    for other in sorted(set(ctx.runs.noted) - {rid}):  # a hand-off carries its own run alone
        ctx.say(f"omg: warning: the notes on run {other} were not handed off (one run a leg)")
    plan = Plan(rid, str(state["graph"].get("name") or ""), len(state["legs"]), olds, tuple(base))
    manifest = bundle(root, out, plan, publish)
    return (
        f"run {rid} leg {plan.leg} handed off to {out}: {len(manifest['refs'])} refs, "
        f"{manifest['pack']['objects']} objects, {manifest['pack']['bytes']:,} bytes"
    )
