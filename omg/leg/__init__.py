"""One leg of a run: start or resume, the loop, one attempt, judging, workspaces, commits.

Names are imported on first use (git support pulls in pygit2 only when a run lives in git).

- ``run``: a run opened once: its directory, its state.json read once, the graph of its snapshot
  on demand.
- ``start``: start/resume.
- ``loop``: launch and settle; ``LegOptions``, a leg's limits built once.
- ``deadline``: the leg's ``--max-minutes`` on one clock, handed to the loop and every execution.
- ``attempt``: one execution, every attempt.
- ``judge``: success checks.
- ``stall``: pure: whether a feedback round made no progress — findings normalised and compared,
  lane trees — and the escalation a stalled loop makes instead.
- ``decisions``: gates, and a person's ``Guidance``.
- ``structured``: an ``output_schema`` reply validated before any check, and its one correction
  turn in the same session, recorded as a ``node_retried`` of reason ``correction`` — its own
  ledger row, priced.
- ``fields``: pure: ``output_equals`` judged, and the findings field a feedback arc hands back.
- ``caps``: the spend caps beyond one run: reserve before an agent execution starts, settle after,
  pause at a cap; the waits the resume workflow's schedule ends.
- ``wait``: pure: when a run paused for a provider's limit is tried again.
- ``workspace``: where a node runs when its run does not live in git.
- ``commits``: the run branch and lanes.
- ``lease``: which leg holds the run across machines.
- ``dryrun``: every node's invocation rendered with the given inputs; nothing runs.
- ``notes``: facts recorded from outside a leg: a refusal, a supersede, a dispatch.
- ``transcripts``: agent sessions kept and restored.
- ``keys``: the leg's model keys: omg's proxy started once a leg holding them, each agent attempt
  given a placeholder and the proxy's URL and held to its ceiling, the proxy's record on its
  Output.
- ``rootcheck``: whether a node could become root and read omg's memory — passwordless ``sudo``,
  omg as root — refused or warned as ``OMG_SUDO`` says.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omg.leg.commits import RunCommits, attach, clean_run, fetch_run
    from omg.leg.decisions import Decision
    from omg.leg.dryrun import render_plan
    from omg.leg.loop import Leg, LegOptions
    from omg.leg.start import Environment, LegEnd, new_run_id, resume_run, start_run

_WHERE = {
    "Decision": "omg.leg.decisions",
    "Environment": "omg.leg.start",
    "Leg": "omg.leg.loop",
    "LegEnd": "omg.leg.start",
    "LegOptions": "omg.leg.loop",
    "RunCommits": "omg.leg.commits",
    "attach": "omg.leg.commits",
    "clean_run": "omg.leg.commits",
    "fetch_run": "omg.leg.commits",
    "new_run_id": "omg.leg.start",
    "render_plan": "omg.leg.dryrun",
    "resume_run": "omg.leg.start",
    "start_run": "omg.leg.start",
}
__all__ = [
    "Decision",
    "Environment",
    "Leg",
    "LegEnd",
    "LegOptions",
    "RunCommits",
    "attach",
    "clean_run",
    "fetch_run",
    "new_run_id",
    "render_plan",
    "resume_run",
    "start_run",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'omg.leg' has no attribute {name!r}")
