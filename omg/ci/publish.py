"""The publish job of a leg split in two jobs (`omg publish DIR`; the run job's end is
`runjob`): it runs no node and no code of the pull request; it plans the trigger itself — a
comment's author and their permission checked anew, a dispatch's actor, a schedule's waiting
runs — and does what runs no node (a reply, a refusal and its record, a `/omg status`, a
supersede, a cleared wait) on its own. For a leg it asks the remote where the run's refs stand,
verifies the run job's hand-off against that (`handoff.verify`), pushes it, and then tells
GitHub how the run stands from the verified record (the sticky comment, the status, the next
leg's dispatch): the run job's words are never sent. A refused hand-off lands nothing: a
failure status and a comment say why, and the job is refused. A sound hand-off whose run another
leg moved first lost a race: it lands nothing, and the run is reported as the remote holds it."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from omg.ci import comment, dispatch, pull_request, schedule
from omg.ci.act import act, report, supersede, worst
from omg.ci.actions import (
    Action,
    Apply,
    ApproveSpend,
    ContinueWaits,
    Fold,
    Leg,
    Resume,
    RunEntry,
    Start,
    Supersede,
)
from omg.ci.booking import book_spend
from omg.ci.context import JobContext, LegArgs, Say
from omg.ci.handoff.apply import apply
from omg.ci.handoff.canary import DIGESTS, Canaries
from omg.ci.handoff.manifest import MANIFEST
from omg.ci.handoff.outcome import Refused
from omg.ci.handoff.trees import Ruling
from omg.ci.handoff.verify import Expected, claimed, verify
from omg.ci.look import Look
from omg.ci.planners import plan
from omg.ci.report_md import marker
from omg.errors import OmgError, StateError, UsageError
from omg.git.names import run_ref
from omg.github.commitstatus import context
from omg.github.env import actions
from omg.github.event import Dispatch, PullRequest, read_trigger
from omg.github.markdown import code
from omg.kinds import JobOutcome
from omg.records import LegRecord


class HandoffRefused(StateError):
    """The run job's hand-off was refused; nothing of it was written."""


def publish(
    artifact: Path, args: LegArgs, environ: Mapping[str, str], say: Say, annotate: Say
) -> JobOutcome:
    """`omg publish DIR`: plan the trigger, do what runs no node, and take each leg the plan
    runs from the hand-off in ``artifact`` once verified."""
    ctx = JobContext.of(actions(environ), args, environ, say, annotate)
    trigger = read_trigger(ctx.gh.event_name, ctx.gh.event_path)
    if isinstance(trigger, PullRequest):
        ctx = replace(ctx, default_branch=trigger.default_branch)
    if isinstance(trigger, Dispatch):
        ctx = replace(ctx, args=dispatch.args(trigger, ctx.args))
    look = Look(ctx)
    return carry(ctx, look, plan(trigger, look), handoffs(artifact))


def handoffs(artifact: Path) -> dict[str, Path]:
    """The hand-offs in ``artifact``, by run id: the directory itself when it holds one run's
    (its manifest.json), else each folder of it, named by its run (a schedule's job continues
    several); none when it is absent or empty. Each is verified before it is read further."""
    try:
        if not stat.S_ISDIR(os.lstat(artifact).st_mode):
            return {"": artifact}  # refused as no directory by the check, when a leg takes it
        names = sorted(os.listdir(artifact))
    except FileNotFoundError:
        return {}
    if not names:
        return {}
    if MANIFEST in names:
        return {"*": artifact}
    return {name: artifact / name for name in names}


def _lone(found: dict[str, Path], rid: str) -> Path | None:
    """The one hand-off of ``found`` when it is run ``rid``'s to judge: it moves that run's
    branch, or says nothing readable (the check then says why). A lone hand-off of another
    run (the run job planned another head or wait than this job does) is none of this run's."""
    whole = found.get("*") or found.get("")
    if whole is None:
        return None
    said = claimed(whole)
    return whole if not said or run_ref(rid) in said else None


def carry(ctx: JobContext, look: Look, a: Action, found: dict[str, Path]) -> JobOutcome:
    """Do ``a`` as the publish job may: what runs no node itself, a leg from its hand-off."""
    match a:
        case Leg():
            run = look.run(a.run_id) if look.found(a.run_id) else None
            return carry(ctx, look, pull_request.next_leg(a, run), found)
        case Supersede():
            supersede(ctx, look, a.run_id, a.head)
            return carry(ctx, look, a.then, found)
        case Apply():
            run = look.run(a.run_id)
            decided = comment.decide(
                a, run.state, carrier=ctx.carrier(run.state),
                state_at=lambda ref: look.state_at(a.run_id, ref),
                progress=lambda: look.progress(a.run_id),
                recorded=lambda command: look.recorded(a.run_id, "run_started", command),
            )  # fmt: skip
            if isinstance(decided, Resume):  # its hand-off may have lost a race: judged again
                return take(ctx, look, decided, found, judged=a)
            return carry(ctx, look, decided, found)
        case Start() | Resume() | ApproveSpend():
            return take(ctx, look, a, found)
        case ContinueWaits():
            return _continue_waits(ctx, look, a, found)
        case RunEntry() | Fold():
            raise UsageError("a fan-out wave's jobs run in one job each: omg publish takes none")
    return act(ctx, look, a)  # runs no node: a reply, a refusal, a report, a skip


def _continue_waits(
    ctx: JobContext, look: Look, a: ContinueWaits, found: dict[str, Path]
) -> JobOutcome:
    """Each run whose wait is over, as the run job continued it; one refused hand-off holds
    no other back. The damaged waits the run job named, it named (nothing is written)."""
    outcome: JobOutcome = "failed" if a.damaged else "clean"
    for rid in a.due:
        try:
            run = look.run(rid) if look.found(rid) else None
            outcome = worst(outcome, carry(ctx, look, schedule.waiting(rid, run, ctx.args.push),
                                           found))  # fmt: skip
        except OmgError as exc:
            ctx.say(f"omg: run {rid!r} was not published: {exc}")
            outcome = "failed"
        ctx.notes.clear()
    return outcome


def take(
    ctx: JobContext,
    look: Look,
    a: Start | Resume | ApproveSpend,
    found: dict[str, Path],
    judged: Apply | None = None,
) -> JobOutcome:
    """The leg ``a`` plans, from the run job's hand-off: verified against this job's plan, then
    pushed; GitHub told how the run stands from the record that landed. A hand-off that lost
    its race to another leg (``_then``) is verified against its own start and dropped
    (``_lost``). ``judged``: the comment ``a`` answers, when one."""
    rid = a.run_id
    artifact = found.get(rid) or _lone(found, rid)
    if artifact is None:
        ctx.note(f"the run job handed off no leg of run {rid}: nothing of it to publish")
        return "clean"
    graph: str | None
    seq, decisions = 0, tuple[Ruling, ...]()
    if isinstance(a, Start):
        graph, pr = a.graph.name, a.pr
    else:
        state = look.run(rid).state
        graph, pr = str(state["graph"].get("name") or "") or None, state.get("pull_request")
        seq = state["seq"]
        d = a.decision if isinstance(a, Resume) else None
        decisions = ((d.gate, d.approve, d.by, d.reason),) if d is not None else ()
    number, head = (pr["number"], pr["head_sha"]) if pr is not None else (None, None)
    if pr is not None:  # the head the lanes start from, fetched as the run job fetched it
        ctx.runs.pr_base(ctx.runs.commits(rid).repo, pr)
    expected = replace(_expected(ctx, rid, graph, head), seq=seq, decisions=decisions)
    then = _then(look, rid, artifact, expected, judged)
    checked = verify(artifact, Path.cwd(), then or expected)
    if isinstance(checked, Refused):
        _refused(ctx, checked, number, head, graph or rid)
        raise HandoffRefused(checked.message)
    if then is not None:
        checked.discard()
        return _lost(ctx, look, a, number, judged)
    apply(checked, ctx.args.push, ctx.runs.tokens)
    ctx.say(
        f"omg: run {checked.run_id} leg {checked.leg}: pushed {len(checked.moves)} refs "
        f"({checked.objects} objects, {checked.pack_bytes:,} bytes)"
    )
    look.refetch(rid)
    booked = book_spend(ctx, look.run(rid), seq)
    _wait(ctx, rid, look.run(rid).state["legs"])
    outcome = report(ctx, None, rid, number, idle=not checked.moves)
    return outcome if booked else worst(outcome, "failed")


def _then(
    look: Look, rid: str, artifact: Path, expected: Expected, judged: Apply | None
) -> Expected | None:
    """The hand-off's own plan when another leg moved the run on the remote since its run job
    started: every ref it moves said to move from a commit the remote's ref now descends from
    (the run's branch from none: another leg started the run), the seq the run stood at there,
    and the decision this job judged for the comment. None when the remote stands where the
    hand-off says, or the hand-off's word is no such race: it is verified against the remote."""
    from omg.git.pack import descends

    root, mine = Path.cwd(), run_ref(rid)
    said = claimed(artifact, expected.limits)
    if mine not in said or said[mine] == expected.refs.get(mine):
        return None
    look.refetch(rid)  # the other leg's commits, which may have landed after this job's fetch
    for ref, old in said.items():
        now = expected.refs.get(ref)
        if old != now and (now is None or (old is not None and not descends(root, now, old))):
            return None
    seq, start = 0, said[mine]
    if start is not None:
        at = look.state_at(rid, start)
        if at is None or at[0] != rid:
            return None
        seq = at[1]
    decisions = expected.decisions
    if judged is not None and judged.command.verb in ("approve", "reject"):
        d = comment.decision_of(judged.command, judged.to.login)
        decisions = ((d.gate, d.approve, d.by, d.reason),)
    refs = {ref: old for ref, old in said.items() if old is not None}
    return replace(expected, refs=refs, seq=seq, decisions=decisions)


def _lost(
    ctx: JobContext,
    look: Look,
    a: Start | Resume | ApproveSpend,
    number: int | None,
    judged: Apply | None,
) -> JobOutcome:
    """A sound hand-off whose run another leg moved first: nothing of it lands, and the run is
    reported as the remote holds it — the winner's record, whose publish job dispatched the
    next leg if work was left. A decision this job judged still to apply (the run moved while
    it was judged) was not applied: its comment is told to decide again."""
    rid = a.run_id
    ctx.note(f"another leg advanced run {rid} first; nothing of this leg landed")
    if judged is not None and isinstance(a, Resume) and a.decision is not None:
        ctx.note(f"{judged.command.text!r} was not applied; decide again on the run as it "
                 "stands")  # fmt: skip
    look.refetch(rid)
    return report(ctx, None, rid, number, judged.to if judged else None, idle=True)


def _wait(ctx: JobContext, rid: str, legs: list[LegRecord]) -> None:
    """The run's wait for the schedule, from the verified record: recorded when its last leg
    stopped at a limit or a day's cap, cleared once it waits no more (the run job, which
    writes nothing, left both to this job)."""
    from omg.leg.caps import post_wait

    commits = ctx.runs.commits(rid)
    post_wait(commits.repo, ctx.args.push, rid, legs)


def _expected(ctx: JobContext, rid: str, graph: str | None, head: str | None) -> Expected:
    """What this job planned, from its own view: the run and head, the refs as the remote
    holds them, the checkout, the workflow a leg may dispatch, the job's secrets."""
    from omg.git.pack import head_commit, remote_run_refs

    root = Path.cwd()
    refs = remote_run_refs(root, ctx.args.push, rid, ctx.runs.tokens)
    workflow = ctx.args.dispatch_workflow or ctx.gh.workflow_file
    values = [value for _, value, _ in ctx.runs.tokens]
    digests = ctx.environ.get(DIGESTS, "").split()
    return Expected(
        run_id=rid,
        graph=graph,
        refs=dict(refs),
        base=(head_commit(root), *((head,) if head else ())),
        head=head,
        workflows=frozenset({workflow} if workflow else ()),
        canaries=Canaries.of(values, digests),
    )


def _refused(
    ctx: JobContext, refused: Refused, number: int | None, head: str | None, graph: str
) -> None:
    """A clear failure: in the log, and on a pull request its head's status and the sticky
    comment."""
    ctx.say(f"omg: {refused.message}")
    if head is not None:
        ctx.api.set_status(
            head, context(graph), "failure", f"the leg's output was refused ({refused.reason})",
            ctx.gh.run_url,
        )  # fmt: skip
    if number is None:
        return
    m = marker(number, graph)
    body = (
        f"{m}\n### omg · the leg's output was refused\n\nThe publish job refused what the run "
        f"job handed it ({refused.reason}): {code(refused.where)} {code(refused.why)}. Nothing "
        f"of it was pushed or published. [The workflow run]({ctx.gh.run_url})\n"
    )
    ctx.api.upsert_comment(number, m, body)
