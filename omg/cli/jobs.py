"""`omg leg`'s and `omg publish`'s bodies, typer-free (their typer commands and `omg leg`'s
fast path, `fastleg`, call them): the options made the job's arguments (`ci.LegArgs`), the job
handed to `ci/` — read the trigger → plan → act → report; or a leg's hand-off verified, then
published —, its words printed, its outcome the exit code through `exits.BY_JOB`. The callers
import `ci/` and hand its jobs in, which keeps the import chain through here short."""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from omg.cli import exits
from omg.cli.fastargs import DEFAULT_RUNS
from omg.cli.inputs import parse_inputs, utf8
from omg.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from omg.ci import OnSchedule
    from omg.ci.context import LegArgs, Say
    from omg.kinds import JobOutcome
    from omg.leg.caps import SpendCaps

    #: A job of `ci/` (`ci.job.leg`, `ci.job.wave`) and the publish job (`ci.publish.publish`).
    Job = Callable[[LegArgs, Mapping[str, str], Say, Say], JobOutcome]
    Publish = Callable[[Path, LegArgs, Mapping[str, str], Say, Say], JobOutcome]


@dataclass(frozen=True)
class LegLine:
    """`omg leg`'s parameters as its typer command receives them, in its order (``inputs``:
    its ``--input``s); `omg publish` gives the ones it shares."""

    graph: Path | None = None
    run_id: str | None = None
    max_minutes: float | None = None
    max_nodes: int | None = None
    push: str = "origin"
    dispatch_workflow: str | None = None
    inputs: tuple[str, ...] = ()
    node: str | None = None
    fold: bool = False
    base: str | None = None
    max_jobs: int | None = None
    pr_budget_usd: float | None = None
    day_budget_usd: float | None = None
    limit_wait: float | None = None
    on_schedule: str = "continue"
    hand_off: Path | None = None
    runs_dir: Path = DEFAULT_RUNS


def leg(given: LegLine, trigger: Job, wave: Job) -> int:
    """One GitHub Actions job: read the event, run one leg (``trigger``'s, or a fan-out
    ``wave``'s entry or fold), report; the job's exit code."""
    for name in sorted(os.environ):  # the action's inputs: text, or a clear refusal
        if name.startswith("OMG_"):
            utf8(name, os.environ[name])
    from omg.ci import LegArgs
    from omg.leg.loop import LegOptions

    inputs = parse_inputs(list(given.inputs))
    limits = LegOptions(
        max_minutes=given.max_minutes,
        max_nodes=given.max_nodes,
        limit_wait_s=given.limit_wait,
        caps=_caps(given.pr_budget_usd, given.day_budget_usd),
    )
    args = LegArgs(
        given.graph, given.run_id or None, limits, given.push, given.runs_dir, inputs,
        given.dispatch_workflow, node=given.node or None, fold=given.fold,
        base=given.base or None, max_jobs=given.max_jobs,
        on_schedule=_on_schedule(given.on_schedule), hand_off=given.hand_off or None,
    )  # fmt: skip
    run = wave if args.node or args.fold else trigger  # a fan-out wave's job, else the trigger's
    return exits.BY_JOB[run(args, os.environ, say, annotate)]


def publish(artifact: Path, given: LegLine, job: Publish) -> int:
    """The publish job of a leg split in two (``job``, the run job's hand-off in
    ``artifact``); its exit code."""
    from omg.ci import LegArgs
    from omg.leg.loop import LegOptions

    caps = _caps(given.pr_budget_usd, given.day_budget_usd)
    args = LegArgs(
        given.graph, given.run_id or None, LegOptions(caps=caps), given.push, given.runs_dir,
        {}, given.dispatch_workflow or None, on_schedule=_on_schedule(given.on_schedule),
    )  # fmt: skip
    return exits.BY_JOB[job(artifact, args, os.environ, say, annotate)]


def say(message: str) -> None:
    """A line of the job's log."""
    print(message, file=sys.stderr)


def annotate(line: str) -> None:
    """A workflow command (an annotation), on stdout where the runner reads it."""
    print(line)


def _on_schedule(value: str) -> OnSchedule:
    """The --on-schedule choice, refused by name when it is neither."""
    if value == "start":
        return "start"
    if value == "continue":
        return "continue"
    raise UsageError(
        f"--on-schedule {value!r} must be start (today's run of the graph) or continue (the "
        "runs whose wait is over)"
    )


def _caps(pr_usd: float | None, day_usd: float | None) -> SpendCaps | None:
    """The spend caps given to `omg leg` (the action's inputs), each a finite amount > 0."""
    from omg.leg.caps import SpendCaps

    for flag, value in (("--pr-budget-usd", pr_usd), ("--day-budget-usd", day_usd)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise UsageError(f"{flag} {value} must be an amount of dollars > 0")
    caps = SpendCaps(pr_usd, day_usd)
    return caps if caps else None
