"""The run job's end of a leg split in two jobs (`omg leg --hand-off DIR`): the runs it reported
on bundled for the publish job — each run's new commits and its lanes', down to where the
remote holds them, and what its `publisher` recorded (the run job's word: checked, never sent)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from omg.ci.handoff.bundle import Plan, bundle
from omg.ci.handoff.manifest import Publish, nothing
from omg.ci.publisher import Recorder

if TYPE_CHECKING:
    from omg.ci.context import JobContext


def hand_off(ctx: JobContext, out: Path) -> str:
    """Bundle the runs this job reported on into ``out`` — into ``out`` itself for one run (a
    pull request's, a comment's or a dispatch's leg), into ``out/<run id>`` each when there are
    several (a schedule's job continues every run whose wait is over): each run's commits (and
    its lanes') down to where the remote holds them; what was handed off, in a line ('' when the
    job reported on no run: nothing is written)."""
    rids = list(dict.fromkeys(ctx.reported))
    if not rids:
        return ""
    assert isinstance(ctx.api, Recorder)  # the run job's GitHub records its writes
    said = []
    for rid in rids:
        publish = ctx.api.publish if rid == rids[-1] else nothing()
        said.append(_bundle(ctx, rid, out if len(rids) == 1 else out / rid, publish))
    return "; ".join(said)


def _bundle(ctx: JobContext, rid: str, out: Path, publish: Publish) -> str:
    from omg.git.pack import head_commit, remote_run_refs
    from omg.leg.run import open_run

    state = open_run(ctx.args.runs_dir, rid).state
    root = Path.cwd()
    olds: dict[str, str | None] = dict(remote_run_refs(root, ctx.args.push, rid, ctx.runs.tokens))
    base = [head_commit(root)]
    pr = state.get("pull_request")
    if pr is not None:
        base.append(pr["head_sha"])
    publish["notes"] = list(ctx.runs.noted.get(rid, []))
    plan = Plan(rid, str(state["graph"].get("name") or ""), len(state["legs"]), olds, tuple(base))
    manifest = bundle(root, out, plan, publish)
    return (
        f"run {rid} leg {plan.leg} handed off to {out}: {len(manifest['refs'])} refs, "
        f"{manifest['pack']['objects']} objects, {manifest['pack']['bytes']:,} bytes"
    )
