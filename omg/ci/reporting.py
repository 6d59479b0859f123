"""What a job tells GitHub of a run at its end: the outputs, the step summary, annotations, the
sticky comment and the commit status, and the dispatch of the next leg when one is due — then
how the job ended, as an outcome (`cli/` picks the exit code)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from omg.ci.report_md import Situation, annotation_lines, comment, markdown, marker, not_run
from omg.ci.status import show_status
from omg.github import outputs
from omg.github.markdown import cell, code
from omg.graph.model import Graph
from omg.graph.workflows import DISPATCH_INPUT
from omg.kinds import JobOutcome
from omg.leg.run import Run, open_run
from omg.mask import Masker
from omg.schedule import statuses
from omg.state import Event
from omg.state.events import EventFields

if TYPE_CHECKING:  # the leg's machinery is imported when a leg runs, not to report one
    from omg.ci.context import JobContext
    from omg.ci.matrix_entry import EntryEnd
    from omg.ci.prgraph import PrGraph
    from omg.leg.start import Environment, LegEnd


#: The least time between two replies to one login that may not decide, on one pull request.
QUIET = timedelta(minutes=10)
#: The outputs of a job that ran nothing.
SKIPPED = {
    "status": "skipped",
    "run-id": "",
    "gate": "",
    "next": "none",
    "cost-usd": "0.0000",
    "state-ref": "",
}


@dataclass
class Report:
    """What the job tells GitHub of run ``run_id``: the run as the leg left it, how it stands
    (``sit``), the step's outputs, and the mask GitHub's copy goes through. ``idle``: this job
    ran no leg (a `/omg status`, a refusal), so a leg running elsewhere has the last word."""

    run: Run
    graph: Graph
    events: list[Event]
    env: Environment
    mask: Masker
    sit: Situation
    values: dict[str, str]
    number: int | None
    idle: bool
    running: str = ""  # the workflow run carrying a leg now, when this job ran none

    @property
    def outcome(self) -> JobOutcome:
        return "failed" if self.sit.status == "failed" else "clean"

    def answer(self) -> str:
        """The answer to the comment that asked for this report."""
        said = (
            f"a leg is running ({self.running}); the omg comment is updated when it ends"
            if self.running
            else f"{self.sit.status}; the omg comment above has the details"
        )
        return f"run {code(self.run.rundir.run_id)}: {said}."


def situation(ctx: JobContext, run: Run, env: Environment, held: str = "") -> Situation:
    """How run ``run`` stands, and what comes next. ``held``: why the next fan-out wave is not
    dispatched although work is left ('' when nothing holds it)."""
    from omg.leg.notes import progress_seq

    assert env.commits is not None
    rid, state = run.rundir.run_id, run.state
    ref = env.commits.pause_ref(progress_seq(run.rundir)) or env.commits.repo.run_head(rid) or ""
    head = state.get("pull_request", {}).get("head_sha", "")
    note = " ".join(ctx.notes)
    status = state["status"]
    if status == "paused" and state["paused_at"]:
        return Situation("paused", state["paused_at"], ref, head, "gate", note)
    reason = state["legs"][-1].get("reason") if state["legs"] else None
    fork = bool(state.get("pull_request", {}).get("fork"))
    if status == "paused" and fork and reason != "spend_cap":
        # a fork's head: no leg runs its code again without a writer's /omg review or retry
        return Situation("paused", "", ref, head, "none", note)
    if status == "paused" and reason in ("limit", "spend_cap"):
        # a limit, or a day's cap: the resume workflow's schedule continues it once the wait
        # is over; a pull request's cap waits for a writer's /omg approve-spend
        capped = state["legs"][-1].get("capped")
        waits = reason == "limit" or (capped is not None and capped["scope"] == "day")
        return Situation("paused", "", ref, head, "wait" if waits else "none", note)
    if status == "paused":
        after = "none" if held else "dispatch"
        return Situation("continuing", "", ref, head, after, note)
    if status == "running":  # a leg lost its race or was cut: the next leg picks it up
        return Situation("continuing", "", ref, head, "none", note)
    return Situation(status, "", ref, head, "none", note)


def prepare(
    ctx: JobContext,
    end: LegEnd | None,
    run_id: str,
    number: int | None,
    held: str = "",
    *,
    idle: bool | None = None,
) -> Report:
    """Run ``run_id`` as the leg left it, with what was noted since, and how it stands;
    ``idle``: whether this job ran no leg of it (None: as ``end`` says — a publish job, which
    runs none, tells for the leg it verified)."""
    from omg.leg.start import leg_mask

    run = open_run(ctx.args.runs_dir, run_id)
    graph = end.graph if end is not None else run.graph
    events = list(run.rundir.read_events())
    env = ctx.runs.environment(run_id, run)
    mask = leg_mask(env, graph)  # the record is masked; this is GitHub's
    sit = situation(ctx, run, env, held)
    values = {
        "status": sit.status,
        "run-id": run_id,
        "gate": sit.gate,
        "next": sit.next,
        "cost-usd": f"{run.state['cost_usd']:.4f}",
        "state-ref": sit.state_ref,
    }
    if idle is None:
        idle = end is None or end.result is None
    return Report(run, graph, events, env, mask, sit, values, number, idle)


def tell(ctx: JobContext, r: Report) -> None:
    """The next leg dispatched when due, then annotations, the step summary, the sticky
    comment and the commit status."""
    rid = r.run.rundir.run_id
    if r.sit.next == "dispatch" and r.idle:
        r.values["next"] = "none"  # a report (a /omg status): the leg that paused sent it
    elif r.sit.next == "dispatch":
        r.values["next"] = dispatch(ctx, rid, leg=len(r.run.state["legs"]))
        s = r.sit
        r.sit = Situation(s.status, s.gate, s.state_ref, s.head_sha, r.values["next"], s.note)
        r.run = open_run(ctx.args.runs_dir, rid)  # the dispatch was noted: it moved on
        r.events = list(r.run.rundir.read_events())
    state = r.run.state
    commands, cut = annotation_lines(r.graph, state, state["graph_source"], ctx.findings)
    for line in commands:
        ctx.annotate(r.mask.text(line))
    links = ctx.links(rid)
    outputs.write_summary(
        ctx.gh.summary,
        markdown(r.graph, state, r.events, r.sit, links, rows=1000, extra=cut),
        mask=r.mask,
    )
    # The PR's comment is left to the newer head's run when this run is superseded, and to
    # the leg running now when this job ran none (a /omg status, a refusal): a report made
    # meanwhile could land after that leg's own and show a stale state.
    r.running = ctx.carrier(state) if r.idle else ""
    if r.number is not None and state["status"] != "superseded" and not r.running:
        body = comment(r.graph, state, r.events, r.sit, links, r.number)
        ctx.api.upsert_comment(r.number, marker(r.number, r.graph.name), r.mask.text(body))
    # The judged head's status, whichever branch this leg ran on (a dispatched or comment
    # leg's own check never reaches the PR); left to a leg running now.
    pr = state.get("pull_request")
    if pr is not None and not r.running:
        show_status(ctx, pr["head_sha"], r.graph.name, r.sit, leg=len(state["legs"]), pr=pr)


def close(ctx: JobContext, r: Report) -> None:
    """The step's outputs, and this job's REST calls in the step summary."""
    outputs.write_outputs(ctx.gh.output, r.values, mask=r.mask)
    outputs.write_summary(ctx.gh.summary, calls_table(ctx.api.calls))


def said(r: Report) -> str:
    """The job's last line in the log."""
    return f"omg: run {r.run.rundir.run_id}: {r.values['status']} (next: {r.values['next']})"


def calls_table(calls: Mapping[str, int]) -> str:
    """The step summary's account of this job's GitHub REST calls, by endpoint (one line)."""
    each = ", ".join(f"`{what}` {n}" for what, n in sorted(calls.items()))
    return f"\nGitHub REST calls of this job: {sum(calls.values())}{': ' + each if each else ''}\n"


def dispatch(ctx: JobContext, rid: str, leg: int) -> str:
    """Start the next leg with workflow_dispatch (a GITHUB_TOKEN push starts no workflow).

    It runs on the branch this workflow came from, or on the default branch when that is a
    pull request's merge ref: the same trusted workflow file a comment leg runs.
    ``leg``: the leg that sends it (names the note of the dispatch).
    """
    workflow = ctx.args.dispatch_workflow or ctx.gh.workflow_file
    ref = ctx.gh.workflow_branch or ctx.default_branch
    if not workflow or not ref:
        ctx.notes.append(
            "the leg budget ran out with work left, but the workflow file or branch is "
            "unknown, so no next leg was dispatched; dispatch it with run-id " + rid
        )
        return "none"
    sent = ctx.api.dispatch(workflow, ref, {DISPATCH_INPUT: rid}, title=rid)
    fields: EventFields = {}
    if sent.get("workflow_run_id"):
        fields["workflow_run_id"] = sent["workflow_run_id"]
    if sent.get("url"):
        fields["url"] = sent["url"]
    what = f"dispatched {workflow} on {ref}"
    ctx.runs.note(rid, "leg_dispatched", fields, what, f"dispatched-leg{leg}")
    return "dispatch"


def graph_not_run(ctx: JobContext, number: int, rules: PrGraph) -> JobOutcome:
    """A pull request that adds the graph its workflow names: its base has none, so nothing
    runs and no status is set; the sticky comment and the summary say so, with the new
    graph's lint."""
    assert rules.change is not None
    name = rules.head_name or str(rules.source)
    b = rules.base
    body = not_run(name, rules.change, b.base_ref, b.base_sha)
    ctx.api.upsert_comment(number, marker(number, name), f"{marker(number, name)}\n{body}")
    ctx.say(f"omg: PR #{number} adds {rules.source}: reported, not run (it applies once merged)")
    outputs.write_summary(ctx.gh.summary, body)
    return skip(ctx, "")


def skip(ctx: JobContext, why: str, *, quiet: bool = True) -> JobOutcome:
    """Nothing to run: say why (unless ``quiet``), push nothing."""
    if not quiet:
        ctx.say(f"omg: {why}")
        outputs.write_summary(ctx.gh.summary, f"### omg · nothing to run\n\n{code(why)}\n")
    outputs.write_outputs(ctx.gh.output, SKIPPED)
    return "clean"


def entry(ctx: JobContext, rid: str, node: str, done: EntryEnd) -> JobOutcome:
    """A matrix job's report: its nodes' verdicts, and the record it published for the fold."""
    assert done.end is not None
    state = done.end.state
    got = statuses(done.end.graph, state["nodes"])
    verdicts = {n: got[n] for n in done.nodes}
    lines = "\n".join(f"| {cell(n)} | {v} |" for n, v in verdicts.items())
    outputs.write_summary(
        ctx.gh.summary,
        f"### omg · run {code(rid)} · entry {code(node)}\n\n| node | status |\n|---|---|\n"
        f"{lines}\n\nRecord {code((done.record or '')[:12])} published for the fold.\n",
    )
    failed = any(v == "failed" for v in verdicts.values())
    outputs.write_outputs(
        ctx.gh.output,
        {
            "status": "failed" if failed else "published",
            "run-id": rid,
            "record": done.record or "",
            "cost-usd": f"{state['cost_usd']:.4f}",
        },
    )
    shown = ", ".join(f"{n} {v}" for n, v in verdicts.items())
    ctx.say(f"omg: run {rid}: entry {node} published ({shown})")
    return "failed" if failed else "clean"
