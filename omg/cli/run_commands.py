"""The commands that run legs here: `omg run`, `omg resume` and `omg clean` — their options
checked, then handed to `cli/runs`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from omg.cli import complete
from omg.cli.options import (
    DEFAULT_RUNS,
    ByNode,
    Concurrency,
    Executions,
    MaxMinutes,
    MaxNodes,
    NoCommit,
    OutcomeFormat,
    Push,
    Rehearse,
    RunsDir,
    exit_with,
    outcome_format,
    parse_inputs,
    utf8,
)
from omg.errors import UsageError


def run(
    path: Annotated[Path, typer.Argument(help="The graph file to run.")],
    input: Annotated[list[str] | None, typer.Option("--input", "-i", help="name=value")] = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name the run.")] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
    concurrency: Concurrency = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Render, run nothing.")] = False,
    max_minutes: MaxMinutes = None,
    max_nodes: MaxNodes = None,
    push: Push = None,
    no_commit: NoCommit = False,
    base: Annotated[str, typer.Option("--base", help="Worktree base ref.")] = "HEAD",
    by_node: ByNode = False,
    executions: Executions = False,
    rehearse: Rehearse = None,
    format: OutcomeFormat = "text",
) -> None:
    """Start a run: its first leg."""
    from omg.cli import runs as commands
    from omg.cli.views import view

    as_json = outcome_format(format, dry_run, run_id)
    asked = view(by_node, executions)  # both at once refused, --dry-run or not
    inputs = parse_inputs(input or [])
    if dry_run:
        if run_id is not None:  # refused as the run would refuse it, not silently ignored
            from omg.state.runid import check_run_id

            check_run_id(run_id)
        exit_with(commands.dry_run(path, inputs))
    exit_with(
        commands.run(
            path,
            inputs,
            run_id=run_id,
            runs_dir=runs_dir,
            concurrency=concurrency,
            max_minutes=max_minutes,
            max_nodes=max_nodes,
            push=push,
            commit=not no_commit,
            base=base,
            asked=asked,
            rehearse=rehearse,
            as_json=as_json,
        )
    )


def resume(
    run_id: Annotated[
        str, typer.Argument(help="The run to continue.", autocompletion=complete.runs)
    ],
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-run failed nodes; re-arm exhausted loops.")
    ] = False,
    approve: Annotated[
        str | None, typer.Option("--approve", metavar="GATE", autocompletion=complete.gates)
    ] = None,
    reject: Annotated[
        str | None, typer.Option("--reject", metavar="GATE", autocompletion=complete.gates)
    ] = None,
    reason: Annotated[str, typer.Option("--reason", help="Why (required with --reject).")] = "",
    by: Annotated[str | None, typer.Option("--by", help="Who decides (default: you).")] = None,
    guidance: Annotated[
        str | None,
        typer.Option(
            "--guidance",
            metavar="TEXT",
            help="With --retry-failed: words for the re-armed nodes, as {{ guidance }}.",
        ),
    ] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
    concurrency: Concurrency = None,
    max_minutes: MaxMinutes = None,
    max_nodes: MaxNodes = None,
    fetch: Annotated[
        str | None, typer.Option("--fetch", metavar="REMOTE", help="Fetch the run branch first.")
    ] = None,
    push: Push = None,
    no_commit: NoCommit = False,
    by_node: ByNode = False,
    executions: Executions = False,
    rehearse: Rehearse = None,
    input: Annotated[
        list[str] | None,
        typer.Option("--input", "-i", help="name=value: the run's secret inputs, again."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Render the next leg's invocations, run nothing.")
    ] = False,
    approve_spend: Annotated[
        float | None,
        typer.Option(
            "--approve-spend",
            metavar="USD",
            help="Let this run spend USD more beyond the spend caps (pr/day_budget_usd).",
        ),
    ] = None,
    format: OutcomeFormat = "text",
) -> None:
    """Run the next leg of a run."""
    from omg.cli import runs as commands
    from omg.cli.views import view

    as_json = outcome_format(format, dry_run, run_id)
    asked = view(by_node, executions)  # both at once refused, --dry-run or not
    if dry_run:
        exit_with(commands.dry_resume(runs_dir, run_id))

    if approve and reject:
        raise UsageError("--approve and --reject are mutually exclusive; decide one gate per leg")
    for option, text in (("--guidance", guidance), ("--reason", reason), ("--by", by)):
        utf8(option, text or "")
    if reject and not _visible(reason):
        raise UsageError("--reject needs --reason TEXT: a rejection is recorded with why, in "
                         "words that show")  # fmt: skip
    if (approve or reject) and retry_failed:
        raise UsageError("--retry-failed cannot be combined with a gate decision")
    if guidance is not None and not retry_failed:
        raise UsageError("--guidance goes with --retry-failed: the words are for re-armed nodes")
    exit_with(
        commands.resume(
            run_id,
            runs_dir=runs_dir,
            retry_failed=retry_failed,
            approve=approve,
            reject=reject,
            reason=reason,
            by=by,
            guidance=guidance,
            concurrency=concurrency,
            max_minutes=max_minutes,
            max_nodes=max_nodes,
            fetch=fetch,
            push=push,
            commit=not no_commit,
            asked=asked,
            rehearse=rehearse,
            inputs=parse_inputs(input or []),
            approve_spend=approve_spend,
            as_json=as_json,
        )
    )


def clean(
    run_id: Annotated[
        str, typer.Argument(help="The run whose worktrees to remove.", autocompletion=complete.runs)
    ],
    remote: Annotated[str | None, typer.Option("--remote", help="Keep branches not on it.")] = None,
) -> None:
    """Remove a run's worktrees; never a branch holding unpushed commits."""
    from omg.cli import runs as commands

    exit_with(commands.clean(run_id, remote=remote))


def _visible(text: str) -> bool:
    from omg.words import visible

    return visible(text)
