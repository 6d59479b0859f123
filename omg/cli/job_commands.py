"""The commands GitHub's workflows run: `omg leg` and `omg publish` (one GitHub Actions job:
its options, then handed to `jobs`, which hands the job to `ci/` and makes its outcome the exit
code), `omg plan` (a fan-out wave as a job matrix) and `omg prune`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from omg.cli import complete, jobs
from omg.cli.options import DEFAULT_RUNS, MaxMinutes, MaxNodes, RunsDir, exit_with, parse_inputs
from omg.errors import UsageError

#: `omg leg`'s and `omg publish`'s options: the graph, the remote, the next leg's workflow,
#: the run, what a schedule does.
GraphFile = Annotated[
    Path | None,
    typer.Option("--graph", envvar="OMG_GRAPH", help="The graph file (PR events need it)."),
]
PushTo = Annotated[
    str, typer.Option("--push", envvar="OMG_PUSH", metavar="REMOTE", help="Where run branches go.")
]
DispatchTo = Annotated[
    str | None,
    typer.Option(
        "--dispatch-workflow",
        envvar="OMG_DISPATCH_WORKFLOW",
        help="Workflow file the next leg is dispatched to (default: this one).",
    ),
]
RunIdOption = Annotated[
    str | None,
    typer.Option("--run-id", envvar="OMG_RUN_ID", help="The run (default: from the event)."),
]
OnScheduleOption = Annotated[
    str,
    typer.Option(
        "--on-schedule",
        envvar="OMG_ON_SCHEDULE",
        metavar="start|continue",
        help="On a schedule event: start today's run of the graph, or (the default) "
        "continue the runs whose wait for a limit or a day's cap is over.",
    ),
]
PrBudget = Annotated[
    float | None,
    typer.Option(
        "--pr-budget-usd",
        envvar="OMG_PR_BUDGET_USD",
        help="Spend cap over all runs of one pull request (replaces the graph's).",
    ),
]
DayBudget = Annotated[
    float | None,
    typer.Option(
        "--day-budget-usd",
        envvar="OMG_DAY_BUDGET_USD",
        help="Spend cap over all runs of the repository in one UTC day (replaces the graph's).",
    ),
]


def prune_command(
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote", metavar="REMOTE", help="Prune REMOTE's refs (default: this clone's)."
        ),
    ] = None,
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            metavar="AGE",
            help="Only what last changed longer ago than AGE: 30d, 12h, 2w; 0d: any age.",
        ),
    ] = "30d",
    keep_failed: Annotated[
        bool, typer.Option("--keep-failed", help="Keep failed runs whatever their age.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be removed; remove nothing.")
    ] = False,
) -> None:
    """Remove settled runs' branches, lanes and notes past an age, and stale spend books."""
    from omg.cli.prune import prune

    exit_with(prune(remote, older_than, keep_failed=keep_failed, dry_run=dry_run))


def leg_command(
    graph: GraphFile = None,
    run_id: RunIdOption = None,
    max_minutes: MaxMinutes = None,
    max_nodes: MaxNodes = None,
    push: PushTo = "origin",
    dispatch_workflow: DispatchTo = None,
    input: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="name=value for a new run (OMG_INPUTS: one a line)."),
    ] = None,
    node: Annotated[
        str | None,
        typer.Option("--node", envvar="OMG_NODE", help="Fan-out: run this matrix entry alone."),
    ] = None,
    fold: Annotated[
        bool,
        typer.Option("--fold", envvar="OMG_FOLD", help="Fan-out: fold the wave's records in."),
    ] = False,
    base: Annotated[
        str | None,
        typer.Option(
            "--base", envvar="OMG_BASE", help="Fan-out: the commit the wave was planned at."
        ),
    ] = None,
    max_jobs: Annotated[
        int | None,
        typer.Option(
            "--max-jobs", envvar="OMG_MAX_JOBS", min=1, max=256, help="Fan-out: jobs a wave."
        ),
    ] = None,
    pr_budget_usd: PrBudget = None,
    day_budget_usd: DayBudget = None,
    limit_wait: Annotated[
        float | None,
        typer.Option(
            "--limit-wait",
            envvar="OMG_LIMIT_WAIT",
            min=0,
            max=86400,
            help="Seconds a run paused for a provider's limit waits before a scheduled leg "
            "tries again (default: 1800 for a usage limit, 300 for a rate limit).",
        ),
    ] = None,
    on_schedule: OnScheduleOption = "continue",
    hand_off: Annotated[
        Path | None,
        typer.Option(
            "--hand-off",
            envvar="OMG_HAND_OFF",
            metavar="DIR",
            help="The run job of a leg split in two: write nothing to GitHub or the remote; "
            "hand the leg's commits and what it would publish off into DIR. With --node: "
            "the entry's record; with --fold: DIR holds the entries' hand-offs, verified first.",
        ),
    ] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
) -> None:
    """One GitHub Actions job: read the event, run one leg, report."""
    given = jobs.LegLine(
        graph, run_id, max_minutes, max_nodes, push, dispatch_workflow, tuple(input or ()),
        node, fold, base, max_jobs, pr_budget_usd, day_budget_usd, limit_wait, on_schedule,
        hand_off, runs_dir,
    )  # fmt: skip
    from omg.ci import job

    exit_with(jobs.leg(given, job.leg, job.wave))


def publish_command(
    artifact: Annotated[Path, typer.Argument(metavar="DIR", help="The run job's hand-off.")],
    graph: GraphFile = None,
    run_id: RunIdOption = None,
    push: PushTo = "origin",
    dispatch_workflow: DispatchTo = None,
    on_schedule: OnScheduleOption = "continue",
    runs_dir: RunsDir = DEFAULT_RUNS,
    pr_budget_usd: PrBudget = None,
    day_budget_usd: DayBudget = None,
) -> None:
    """The publish job of a leg split in two: plan the trigger, answer and record what runs no
    node, verify the run job's hand-off of a leg, then push it and tell GitHub how the run
    stands; a refused hand-off lands nothing (exit 3)."""
    given = jobs.LegLine(
        graph, run_id, push=push, dispatch_workflow=dispatch_workflow, on_schedule=on_schedule,
        runs_dir=runs_dir, pr_budget_usd=pr_budget_usd, day_budget_usd=day_budget_usd,
    )  # fmt: skip
    from omg.ci.publish import publish

    exit_with(jobs.publish(artifact, given, publish))


def plan_command(
    run_id: Annotated[str, typer.Argument(help="The run to plan.", autocompletion=complete.runs)],
    matrix: Annotated[
        bool, typer.Option("--matrix", help="As a GitHub strategy.matrix (the only form).")
    ] = False,
    max_jobs: Annotated[
        int | None,
        typer.Option(
            "--max-jobs", envvar="OMG_MAX_JOBS", min=1, max=256, help="At most this many jobs."
        ),
    ] = None,
    fetch: Annotated[
        str | None,
        typer.Option("--fetch", metavar="REMOTE", help="Fetch the run from REMOTE first."),
    ] = None,
    start: Annotated[
        Path | None,
        typer.Option("--start", metavar="GRAPH", help="With --fetch: start the run if absent."),
    ] = None,
    input: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="name=value for a started run (OMG_INPUTS too)."),
    ] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
) -> None:
    """Print the nodes that may run now on machines of their own, as a job matrix."""
    if not matrix:
        raise UsageError("omg plan prints a job matrix: `omg plan RUN_ID --matrix`")
    if start is not None and fetch is None:
        raise UsageError("--start records the run's first leg on a remote: add --fetch REMOTE")
    from omg.cli.plan import Source
    from omg.cli.plan import matrix as planned

    source = Source(fetch, start, parse_inputs(input or []))
    text, notes = planned(runs_dir, run_id, max_jobs, source)
    print(text)  # stdout is the JSON alone, for jq or a step's output
    for note in notes:
        print(f"omg plan: {note}", file=sys.stderr)
