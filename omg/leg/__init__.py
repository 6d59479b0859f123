"""One leg of a run: start or resume, the loop, one attempt, judging, workspaces, commits.

Names are imported on first use (git support pulls in pygit2 only when a run lives in git).
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
