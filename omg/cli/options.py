"""The options several commands share, declared once as ``Annotated`` types, and the small
checks of what a command line gives (``name=value`` inputs, UTF-8, ``--format``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer

from omg.cli.fastargs import DEFAULT_RUNS as DEFAULT_RUNS  # typer-free: the fast paths'
from omg.cli.inputs import parse_inputs as parse_inputs
from omg.cli.inputs import utf8 as utf8
from omg.errors import UsageError

RunsDir = Annotated[Path, typer.Option("--runs-dir", help="Where run directories live.")]
Concurrency = Annotated[
    int | None,
    typer.Option("--concurrency", "-c", min=1, help="Parallel nodes (default: the graph's)."),
]
MaxMinutes = Annotated[
    float | None,
    typer.Option(
        "--max-minutes",
        envvar="OMG_MAX_MINUTES",
        min=0,
        help="Leg time budget: start no node whose timeout would not fit.",
    ),
]
MaxNodes = Annotated[
    int | None,
    typer.Option(
        "--max-nodes", envvar="OMG_MAX_NODES", min=0, help="At most N node executions this leg."
    ),
]
ByNode = Annotated[
    bool, typer.Option("--by-node", help="Ledger: one row per node instead of per execution.")
]
Executions = Annotated[
    bool,
    typer.Option(
        "--executions",
        help="Ledger: one row per execution however long the run (a run of more than "
        "10,000 events shows one row per node by default).",
    ),
]
FetchRuns = Annotated[
    str | None,
    typer.Option(
        "--fetch",
        metavar="REMOTE",
        help="The runs on REMOTE's run branches (fetched into refs/remotes/ only).",
    ),
]
NoCommit = Annotated[bool, typer.Option("--no-commit", help="Do not commit the run to git.")]
Push = Annotated[
    str | None,
    typer.Option(
        "--push",
        metavar="REMOTE",
        help="Push the run branch at the leg's start, pause, end or failure, and every "
        "OMG_PUSH_EVERY seconds (default 5) as nodes settle.",
    ),
]
Rehearse = Annotated[
    Path | None,
    typer.Option(
        "--rehearse",
        metavar="SCRIPT",
        help="Answer agent nodes from a stub-model script: real CLI, no API, nothing spent.",
    ),
]


OutputFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="text|json",
        help="json: one JSON document (schemas/status.schema.json).",
    ),
]


def exit_with(code: int) -> NoReturn:
    raise typer.Exit(code)


OutcomeFormat = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="text|json",
        help="json: all else on stderr, the leg's outcome as one JSON line on stdout.",
    ),
]


#: Set by `run` / `resume --format json`: a refusal then ends stdout with its outcome line too.
OUTCOME: dict[str, str | None] = {}


def outcome_format(value: str, dry_run: bool, run_id: str | None) -> bool:
    """Whether run/resume end with their outcome as a JSON line (not with --dry-run)."""
    as_json = json_format(value)
    if as_json and dry_run:
        raise UsageError("--format json reports how a leg ended; --dry-run runs no leg")
    if as_json:
        OUTCOME["run_id"] = run_id
    return as_json


def json_format(value: str) -> bool:
    """Whether ``--format`` asks for JSON; a usage error names the two it takes."""
    if value not in ("text", "json"):
        raise UsageError(f"--format {value!r} is not one of text, json")
    return value == "json"
