"""The commit status ``omg/<graph>`` on the head a run judges: set to what the run's situation
says, linking the leg's workflow run; GitHub's refusal (no ``statuses: write``) said once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omg.errors import GitHubForbidden
from omg.github import outputs
from omg.github.annotations import workflow_command
from omg.github.commitstatus import changing, context, describe
from omg.github.markdown import code
from omg.records import PullRequestRecord

if TYPE_CHECKING:
    from omg.ci.context import JobContext
    from omg.ci.report_md import Situation

#: What `said_once` keeps when the job said that GitHub refused its commit status.
REFUSED = "status refused"


def show_status(
    ctx: JobContext,
    head: str,
    graph_name: str,
    sit: Situation,
    *,
    leg: int = 0,
    pr: PullRequestRecord | None = None,
) -> None:
    """Set ``omg/<graph>`` on the judged head to what ``sit`` says, linking this leg's run;
    ``pr``: the run's record of the PR (a change to its graph is said first)."""
    note = ""
    if sit.status == "superseded":
        note = "a newer head of the pull request is judged by a run of its own"
    state, description = describe(sit.status, gate=sit.gate, ref=sit.state_ref, leg=leg, note=note)
    if pr is not None and "graph_change" in pr and sit.status != "superseded":
        description = changing(description)
    try:
        ctx.api.set_status(head, context(graph_name), state, description, ctx.gh.run_url)
    except GitHubForbidden as exc:  # a workflow without `statuses: write`: a warning
        if REFUSED not in ctx.said_once:
            ctx.said_once.add(REFUSED)
            _warn_no_status(ctx, context(graph_name), str(exc))


def _warn_no_status(ctx: JobContext, name: str, refused: str) -> None:
    """Say once — log, annotation, step summary — that the status was refused and which
    permission the workflow's job needs; the leg goes on without a status."""
    what = (
        f"the commit status {name} was not set: {refused}. The leg goes on without it; "
        "add `statuses: write` to the job's `permissions:` in the workflow to show the run's "
        "state on the pull request's head"
    )
    ctx.say(f"omg: warning: {what}")
    ctx.annotate(workflow_command("warning", what, {"title": f"omg: no {name} status"}))
    outputs.write_summary(
        ctx.gh.summary,
        f"\n> ⚠️ The commit status {code(name)} was not set: GitHub answered "
        f"{code(refused)}. Add `statuses: write` to the job's `permissions:` in the "
        "workflow; the leg went on without it.\n",
    )
