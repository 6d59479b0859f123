"""The one executor: what a planner decided, done — notes recorded, comments answered, legs
started or resumed through `leg/`, earlier heads superseded — and the one race loop: an action
that lost its race to another leg (MovedOn) is planned again on the run fetched anew."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from omg.ci import comment, fanout, legs, pull_request, reporting, schedule
from omg.ci.actions import (
    Action,
    Apply,
    ApproveSpend,
    ContinueWaits,
    DropWait,
    Fold,
    Leg,
    NotRun,
    Refuse,
    RefuseDecision,
    Reply,
    ReportOnly,
    Resume,
    RunEntry,
    Skip,
    Start,
    Supersede,
    To,
)
from omg.ci.report_md import Situation, addressee, answer
from omg.ci.status import show_status
from omg.errors import MovedOn, OmgError, StateError
from omg.github.client import Quiet
from omg.github.markdown import code
from omg.kinds import JobOutcome
from omg.leg.run import Run, open_run
from omg.mask import NOTHING, Masker
from omg.state.events import EventFields
from omg.words import excerpt

if TYPE_CHECKING:
    from omg.ci.context import JobContext
    from omg.ci.look import Look
    from omg.ci.matrix_fold import Taken
    from omg.graph.model import Graph
    from omg.leg.start import LegEnd
    from omg.state import State

#: How often an action is planned again after another leg moved the run first.
RACE_TRIES = 3

A = TypeVar("A")
R = TypeVar("R")


def act(ctx: JobContext, look: Look, a: Action) -> JobOutcome:
    """Do ``a``, then report; how the job ended."""
    match a:
        case Skip():
            return reporting.skip(ctx, a.why, quiet=a.quiet)
        case Reply():
            reply(ctx, a.to, a.text)
            return act(ctx, look, a.then)
        case NotRun():
            return reporting.graph_not_run(ctx, a.number, a.rules)
        case ReportOnly():
            if a.note:
                ctx.notes.append(a.note)
            return report(ctx, None, a.run_id, a.number, a.to)
        case Start():
            return report(ctx, _start(ctx, look, a), None, a.number)
        case Resume() | ApproveSpend():
            return report(ctx, _resume(ctx, look, a), None, a.number)
        case Refuse():
            return _refuse(ctx, look, a)
        case RefuseDecision():
            return _refuse_decision(ctx, look, a)
        case Apply():
            return _apply(ctx, look, a)
        case Leg():
            run = look.run(a.run_id) if look.found(a.run_id) else None
            return act(ctx, look, pull_request.next_leg(a, run))
        case Supersede():
            supersede(ctx, look, a.run_id, a.head)
            return act(ctx, look, a.then)
        case ContinueWaits():
            return _continue_waits(ctx, look, a)
        case DropWait():
            ctx.say(f"omg: {a.why}")
            ctx.runs.drop_wait(a.run_id)
            return "clean"
        case RunEntry():
            return _entry(ctx, a)
        case Fold():
            return _fold(ctx, look, a)


def race(
    look: Look,
    rid: str,
    plan: Callable[[Run], A],
    do: Callable[[A], R],
    *,
    contested: Callable[[A], bool],
    again: str = "",
) -> R | None:
    """``plan`` on run ``rid`` as it stands, then ``do`` it; when a ``contested`` action lost its
    race (another leg advanced the run first: MovedOn), say ``again``, fetch the run anew and
    plan again — at most RACE_TRIES times. None when every try lost."""
    for _ in range(RACE_TRIES):
        action = plan(look.run(rid))
        if not contested(action):
            return do(action)
        try:
            return do(action)
        except MovedOn:
            if again:
                look.ctx.say(again)
            look.refetch(rid)
    return None


def report(
    ctx: JobContext,
    end: LegEnd | None,
    rid: str | None,
    number: int | None,
    to: To | None = None,
    *,
    held: str = "",
    idle: bool | None = None,
) -> JobOutcome:
    """Tell GitHub how the run stands (``reporting``), answer ``to`` with it, and end.
    ``idle``: whether this job ran no leg of it (None: as ``end`` says)."""
    run_id = end.run_id if end is not None else rid
    if run_id is None:  # a leg that lost its race before the run existed anywhere
        return reporting.skip(ctx, " ".join(ctx.notes) or "nothing ran", quiet=False)
    ctx.reported.append(run_id)
    told = reporting.prepare(ctx, end, run_id, number, held, idle=idle)
    try:
        reporting.tell(ctx, told)
        if number is not None and to is not None:
            reply(ctx, to, told.answer(), told.mask)
    finally:
        reporting.close(ctx, told)
    ctx.say(reporting.said(told))
    return told.outcome


def reply(ctx: JobContext, to: To, said: str, mask: Masker = NOTHING) -> bool:
    """Answer a comment once (its key finds the answer again) — and a login that may not
    decide (``to.quiet``) at most once every ``QUIET`` on the pull request, so a burst of its
    comments costs one reply: the rest are logged, not answered (False)."""
    quiet = None
    if to.quiet:
        quiet = Quiet(addressee(to.login), datetime.now(UTC) - reporting.QUIET)
    body = mask.text(answer(to.key, to.login, said))
    if ctx.api.post_once(to.number, to.key, body, quiet=quiet) is not None:
        return True
    minutes = int(reporting.QUIET.total_seconds() // 60)
    ctx.note(f"{to.login} was answered in the last {minutes} minutes; not again now")
    return False


def _start(ctx: JobContext, look: Look, a: Start) -> LegEnd | None:
    try:
        return legs.start(ctx, a)
    except MovedOn as why:
        _lost(ctx, look, a.run_id, why)
        return None


def _resume(ctx: JobContext, look: Look, a: Resume | ApproveSpend) -> LegEnd | None:
    contest = isinstance(a, ApproveSpend) or a.contest
    try:
        return legs.resume(ctx, a, look.run(a.run_id))
    except MovedOn as why:
        if contest:  # the race loop judges the command again
            raise
        _lost(ctx, look, a.run_id, why)
        return None


def _lost(ctx: JobContext, look: Look, rid: str, why: MovedOn) -> None:
    """Another leg of this run won the compare-and-swap: this one ends, having spent nothing."""
    ctx.note(f"another leg advanced run {rid} first; this leg ran nothing ({why})")
    look.refetch(rid)  # report what the winner recorded


def _apply(ctx: JobContext, look: Look, a: Apply) -> JobOutcome:
    """A `/omg` command judged on the run as it stands, and judged again after a lost race."""
    rid = a.run_id

    def plan(run: Run) -> Action:
        return comment.decide(
            a,
            run.state,
            carrier=ctx.carrier(run.state),
            state_at=partial(look.state_at, rid),
            progress=partial(look.progress, rid),
            recorded=partial(look.recorded, rid, "run_started"),
        )

    done = race(
        look,
        rid,
        plan,
        partial(act, ctx, look),
        contested=lambda action: isinstance(action, Resume | ApproveSpend),
        again=f"omg: run {rid} moved on while deciding; judging {a.command.text!r} again",
    )
    return done if done is not None else act(ctx, look, comment.kept_moving(a))


def _refuse(ctx: JobContext, look: Look, a: Refuse) -> JobOutcome:
    """Record the refusal on the run, answer the comment once, and change nothing else."""
    cmd, login = a.command, a.to.login
    written = f"{cmd.text} (comment {a.to.comment_id})"
    seen = look.recorded(a.run_id, "decision_refused", written)
    why = excerpt(a.why)  # a refusal may quote the comment (a gate it named): bounded
    if not seen:  # else a re-run of this job: the refusal is on record already
        fields: EventFields = {"by": login, "reason": why, "command": written}
        if cmd.gate:
            fields["node_id"] = excerpt(cmd.gate)
        what = f"{cmd.verb} by {login} refused"
        ctx.runs.note(a.run_id, "decision_refused", fields, what, f"refused-c{a.to.comment_id}")
    answered = reply(ctx, a.to, f"omg refused {code(cmd.text)}: {code(why)}.")
    ctx.note(f"refused {cmd.text!r} from {login}: {why}")
    if not answered:  # one of a burst: on record, and no REST call more than it took
        return reporting.skip(ctx, " ".join(ctx.notes), quiet=False)
    return report(ctx, None, a.run_id, a.to.number)


def _refuse_decision(ctx: JobContext, look: Look, a: RefuseDecision) -> JobOutcome:
    """Record a dispatched decision's refusal on the run, then refuse the job."""
    fields: EventFields = {
        "node_id": a.gate,
        "by": a.by,
        "reason": a.why,
        "command": f"dispatch {a.verdict} {a.gate}",
    }
    nid = f"refused-r{look.workflow_run()}"
    ctx.runs.note(a.run_id, "decision_refused", fields, f"decision by {a.by} refused", nid)
    raise StateError(f"decision refused: {a.why}")


def supersede(ctx: JobContext, look: Look, old: str, new_head: str) -> None:
    """The old head's run stops counting, so no decision on it lands: recorded on its branch
    when it is at rest, else as a note the leg running it folds in at its end."""
    if not look.found(old):
        return
    fields: EventFields = {
        "head_sha": new_head,
        "by": ctx.gh.actor or "github",
        "reason": f"the pull request moved to {new_head[:12]}",
    }
    what, nid = f"superseded by {new_head[:12]}", f"superseded-{new_head}"

    def do(step: pull_request.Superseding) -> pull_request.Superseding:
        if step == "note":  # a leg may be running it
            ctx.runs.note(old, "run_superseded", fields, what, nid)
        elif step == "on_branch":  # a leg that advanced it meanwhile: look again
            ctx.runs.on_branch(old, "run_superseded", fields, nid, what)
        return step

    done = race(
        look, old, lambda run: pull_request.superseding(run.state), do,
        contested=lambda step: step == "on_branch",
    )  # fmt: skip
    if done == "settled":
        return
    if done is None:  # it kept moving: the leg that moves it folds the note in
        ctx.runs.note(old, "run_superseded", fields, what, nid)
    ctx.notes.append(f"run {old} (the previous head) is superseded; its record is kept")
    state = open_run(ctx.args.runs_dir, old).state
    old_head = state.get("pull_request", {}).get("head_sha", "")
    if old_head:
        name = str(state["graph"].get("name") or "")
        show_status(ctx, old_head, name, Situation("superseded"))


def _continue_waits(ctx: JobContext, look: Look, a: ContinueWaits) -> JobOutcome:
    """One leg for each run whose wait is over, one after the other; a damaged wait is named
    and skipped — damage lets no run go early."""
    push = ctx.args.push
    for rid, why in a.damaged:
        ctx.say(
            f"omg: the wait of run {rid!r} was skipped: refs/omg/waits/{rid} on "
            f"{push} is damaged ({why}); the other runs go on. Remove it with "
            f"`git push {push} :refs/omg/waits/{rid}`; `omg resume` or "
            "`/omg retry` continues its run at once"
        )
    outcome: JobOutcome = "failed" if a.damaged else "clean"
    if not a.due:
        waiting = f"no run waits to be continued now ({a.waiting} waiting)"
        return worst(outcome, reporting.skip(ctx, waiting, quiet=False))
    for rid in a.due:
        try:
            run = look.run(rid) if look.found(rid) else None
            outcome = worst(outcome, act(ctx, look, schedule.waiting(rid, run, push)))
        except OmgError as exc:  # one run's trouble does not hold the others back
            ctx.say(
                f"omg: the wait of run {rid!r} was not continued: {exc} (a wait omg did "
                f"not record is removed with `git push {push} :refs/omg/waits/{rid}`)"
            )
            outcome = "failed"
        ctx.notes.clear()
    return outcome


def _entry(ctx: JobContext, a: RunEntry) -> JobOutcome:
    """A matrix job: its entry run, its record published."""
    from omg.ci.matrix_entry import run_entry

    args = ctx.args
    try:
        done = run_entry(
            a.run_id,
            a.node,
            args.base,
            ctx.runs.environment(a.run_id),
            remote=args.push,
            limits=args.limits,
            stamp=ctx.stamp(),
            hand_off=args.hand_off,
            tokens=ctx.runs.tokens,
        )
    except MovedOn as lost:
        return reporting.skip(ctx, f"another job published entry {a.node} first; dropped ({lost})")
    if done.end is None:
        return reporting.skip(ctx, done.why, quiet=False)
    return reporting.entry(ctx, a.run_id, a.node, done)


def _fold(ctx: JobContext, look: Look, a: Fold) -> JobOutcome:
    """The job after the matrix: the wave's records folded in, the next wave dispatched."""
    from omg.ci.matrix_fold import drop, fold_wave, gather

    rid, args = a.run_id, ctx.args
    env = ctx.runs.environment(rid)
    assert env.commits is not None
    repo = env.commits.repo
    head = repo.run_head(rid) or ""
    if args.base and head != args.base:
        return reporting.skip(
            ctx,
            f"the wave planned at {args.base[:12]} was folded already (run {rid} is at "
            f"{head[:12]})",
            quiet=False,
        )
    run = look.run(rid)
    state = run.state
    number = state.get("pull_request", {}).get("number")
    if state["paused_at"]:
        ctx.notes.append(f"run {rid} waits at gate {state['paused_at']}")
        return report(ctx, None, rid, number)
    taken = None
    if args.entries is not None:  # the matrix jobs handed their records off: verified first
        taken = _take(ctx, args.entries, rid, run.graph, state)
    wave = gather(
        repo, args.push, run.graph, state, head, max_jobs=args.max_jobs, warn=ctx.say, taken=taken
    )
    seq = state["seq"]
    try:
        end = fold_wave(rid, env, wave, ctx.stamp())
    except MovedOn as lost:
        _lost(ctx, look, rid, lost)
        return report(ctx, None, rid, number)
    booked = True
    if taken is None:
        drop(repo, args.push, rid, wave, ctx.say)
    else:  # the matrix jobs wrote no book: the wave's spend, from the records it verified
        from omg.ci.booking import book_spend

        booked = book_spend(ctx, run, seq)
    ctx.say(f"omg: run {rid}: folded {', '.join(wave.folded) or 'nothing'}")
    if wave.missing:
        ctx.notes.append(f"no record from {', '.join(wave.missing)}: planned again")
    if wave.stale:
        ctx.say(f"omg: dropped stale records: {', '.join(wave.stale)}")
    held = fanout.stuck(end, state)
    if held:
        ctx.notes.append(held)
    outcome = report(ctx, end, None, number, held=held)
    return outcome if booked else worst(outcome, "failed")


def _take(ctx: JobContext, entries: Path, rid: str, graph: Graph, state: State) -> Taken:
    """The wave's entries' hand-offs in ``entries``, each verified against what this job plans:
    the entries of the wave at the run's head, the run's refs as the remote holds them, the
    checkout its lanes start from, the secrets it knows."""
    from omg import matrix
    from omg.ci.handoff.canary import DIGESTS, Canaries
    from omg.ci.handoff.verify import Expected
    from omg.ci.matrix_fold import take
    from omg.git.pack import head_commit, remote_run_refs

    root = Path.cwd()
    planned = tuple(e.node for e in matrix.plan(graph, state["nodes"], ctx.args.max_jobs).entries)
    expected = Expected(
        run_id=rid,
        graph=str(state["graph"].get("name") or ""),
        refs=dict(remote_run_refs(root, ctx.args.push, rid, ctx.runs.tokens)),
        base=(head_commit(root),),
        canaries=Canaries.of(
            [value for _, value, _ in ctx.runs.tokens], ctx.environ.get(DIGESTS, "").split()
        ),
    )
    taken = take(entries, root, rid, planned, expected, ctx.say)
    for entry, seconds in taken.seconds.items():
        ctx.say(f"omg: entry {entry}'s hand-off checked in {seconds:.3f}s")
    return taken


def worst(a: JobOutcome, b: JobOutcome) -> JobOutcome:
    """The outcome of a job that did both."""
    return "failed" if "failed" in (a, b) else "clean"
