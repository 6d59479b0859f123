"""The GitHub Actions job: read the trigger → plan (pure) → act → report.

`job` is the front door (`omg leg`, and a fan-out wave's `omg leg --node` / `--fold`): it
reads the trigger (`github/event`) and hands it (`planners`) to the planner of its kind —
`pull_request`, `comment` (a `/omg` command: who may, and what it does to the run as it stands
— admission),
`dispatch`, `schedule`, `fanout`. A planner is pure: it asks `facts` its questions (`look`
answers them from the checkout, the remote and GitHub, when asked) and returns an action
(`actions`: a closed set of frozen values — Skip, Reply, Refuse, Resume, ApproveSpend, Start,
Supersede, ReportOnly, …). `act` alone does what an action says: notes on the run, replies to
comments, legs started or resumed through `leg/` (`legs`: the stamp, the pending status, the
live progress), earlier heads superseded; and it holds the one race loop, which plans again on
the run fetched anew when another leg moved it first (`except MovedOn` is `act`'s alone).
`reporting` tells GitHub how the run stands — outputs, step summary, annotations, the sticky
comment (`report_md`: its Markdown), the commit status (`status`), the next leg's dispatch — and
the job ends with an outcome, never an exit code: `cli/` maps it (`cli/exits.BY_JOB`) and hands
in the printers, so only `cli/` prints. `context` holds what every part is handed (one frozen
`JobContext`: GitHub, the runs the job touches — `jobruns` — its arguments, its notes).

Live progress on the pull request while a leg runs: `live` (a recorder listener) paced by
`pace` (pure). A pull request's graph comes from the commit it targets (`prgraph`). A fan-out
wave: `matrix_entry` (a matrix job's leg and its record on `refs/omg/fanout/…`) and
`matrix_fold` (the job after them: the wave's records taken in, in graph order).
`findingtable` (pure): each structured loop's latest findings as an inert Markdown table, for
the sticky comment and the step summary. `handoff/`: the hand-off between a leg's two jobs — the
run job bundles its new commits and what it would publish, the publish job verifies all of it
before anything is written, then pushes. A leg split in two jobs: in the run job (`omg leg
--hand-off DIR`, read-only token) `publisher` is the job's GitHub — it reads, and records the
comment, status and dispatch it would send into the hand-off — and its leg pushes nothing;
`runjob` is the run job's end (`hand_off`: one bundle per run it reported on); `publish` the
publish job (`omg publish DIR`): the trigger planned anew, what runs no node done on its own
(`act`), and for a leg the run's refs asked of the remote, `handoff.verify`, then `apply`, and
GitHub told how the run stands from the verified record; a refusal lands nothing and says why
on the pull request. `booking` books a verified leg's (or a folded wave's) spend on the
remote's spend books, from the record, never from books the run job kept.

`ci/` sits between `cli/` and `leg/`, and is the only package besides `cli/` that imports
`github/`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omg.ci.context import LegArgs, OnSchedule
    from omg.ci.job import leg, wave

_WHERE = {
    "LegArgs": "omg.ci.context",
    "OnSchedule": "omg.ci.context",
    "leg": "omg.ci.job",
    "wave": "omg.ci.job",
}
__all__ = ["LegArgs", "OnSchedule", "leg", "wave"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'omg.ci' has no attribute {name!r}")
