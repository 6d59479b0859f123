"""`omg run`'s and `omg resume`'s command lines read without typer, so a leg starts sooner.

Only the plain forms are read here (``--option value``, ``--option=value``, the flags, one
graph path or run id); anything else — ``--help``, ``--dry-run``, ``--format json``, a gate
decision, ``--fetch``, a number typer would convert or refuse, an option given twice, a value
that starts with ``-``, shell completion, ``OMG_MAX_MINUTES``/``OMG_MAX_NODES`` set — is left
to the typer app, which answers it as it always has (``tests/cli/test_fastrun.py`` holds the
two to the same values).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from omg.cli.fastargs import AMOUNT, DEFAULT_RUNS, WHOLE, Unusual, path, plain, scan
from omg.cli.guard import guarded, typer_ending

if TYPE_CHECKING:
    from omg.cli.views import View

#: `omg run`'s options taking a value, by each spelling, to the parameter they set.
VALUED = {
    "--input": "input",
    "-i": "input",
    "--run-id": "run_id",
    "--runs-dir": "runs_dir",
    "--concurrency": "concurrency",
    "-c": "concurrency",
    "--max-minutes": "max_minutes",
    "--max-nodes": "max_nodes",
    "--push": "push",
    "--base": "base",
    "--rehearse": "rehearse",
    "--format": "format",
}
FLAGS = {"--no-commit": "no_commit", "--by-node": "by_node", "--executions": "executions"}
#: Each command read here: its valued options and its flags (`resume` names its run first).
COMMANDS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "run": (VALUED, FLAGS),
    "resume": (
        {k: v for k, v in VALUED.items() if v not in ("run_id", "base")},
        {**FLAGS, "--retry-failed": "retry_failed"},
    ),
}
#: What typer reads from the environment for `omg run` (left to it when set).
TYPER_ENV = ("OMG_MAX_MINUTES", "OMG_MAX_NODES", "_OMG_COMPLETE")


@dataclass(frozen=True)
class RunLine:
    """`omg run`'s or `omg resume`'s parameters as the typer command would receive them;
    ``first``: the graph file (run) or the run id (resume)."""

    command: str
    first: str
    inputs: list[str] = field(default_factory=list)
    run_id: str | None = None
    runs_dir: Path = DEFAULT_RUNS
    concurrency: int | None = None
    max_minutes: float | None = None
    max_nodes: int | None = None
    push: str | None = None
    no_commit: bool = False
    base: str = "HEAD"
    by_node: bool = False
    executions: bool = False
    rehearse: Path | None = None
    retry_failed: bool = False


class _RunOptions(TypedDict):
    """The keywords `cli/runs`' run and resume share."""

    runs_dir: Path
    concurrency: int | None
    max_minutes: float | None
    max_nodes: int | None
    push: str | None
    commit: bool
    asked: View
    rehearse: Path | None


def parse(args: list[str], env: Mapping[str, str]) -> RunLine | None:
    """``args`` (the command's name first) as `omg run` or `omg resume` takes them, or None
    when typer should answer."""
    try:
        return _parse(args, env)
    except (Unusual, ValueError):
        return None


def _parse(args: list[str], env: Mapping[str, str]) -> RunLine:
    if not args or args[0] not in COMMANDS or any(name in env for name in TYPER_ENV):
        raise Unusual
    valued, flags = COMMANDS[args[0]]
    first, inputs, given = scan(args[1:], valued, flags, positional=True)
    if first is None or given.get("format", "text") != "text":
        raise Unusual
    if args[0] == "run":
        path(first)  # the graph file: one typer may refuse as unreadable is typer's to answer
    rehearse = given.get("rehearse")
    minutes = given.get("max_minutes")
    return RunLine(
        args[0],
        first,
        inputs,
        run_id=given.get("run_id"),
        runs_dir=path(given.get("runs_dir", str(DEFAULT_RUNS))),
        concurrency=_whole(given.get("concurrency"), 1),
        max_minutes=None if minutes is None else float(plain(minutes, AMOUNT)),
        max_nodes=_whole(given.get("max_nodes"), 0),
        push=given.get("push"),
        no_commit="no_commit" in given,
        base=given.get("base", "HEAD"),
        by_node="by_node" in given,
        executions="executions" in given,
        rehearse=None if rehearse is None else path(rehearse),
        retry_failed="retry_failed" in given,
    )


def _whole(text: str | None, least: int) -> int | None:
    """A whole number typer would take as the same ``int`` (plain digits, at least ``least``)."""
    if text is None:
        return None
    number = int(plain(text, WHOLE))
    if number < least:
        raise Unusual
    return number


def run(given: RunLine) -> None:
    """The command, under the one error handler; exits as the typer app would (an interrupt
    130, a closed stdout 1)."""
    guarded(lambda: sys.exit(typer_ending(lambda: _leg(given))), {})


def _leg(given: RunLine) -> int:
    from omg.cli import runs
    from omg.cli.inputs import parse_inputs
    from omg.cli.views import view

    opts: _RunOptions = {
        "runs_dir": given.runs_dir,
        "concurrency": given.concurrency,
        "max_minutes": given.max_minutes,
        "max_nodes": given.max_nodes,
        "push": given.push,
        "commit": not given.no_commit,
        "asked": view(given.by_node, given.executions),
        "rehearse": given.rehearse,
    }
    if given.command == "resume":
        inputs = parse_inputs(given.inputs)
        return runs.resume(
            given.first,
            retry_failed=given.retry_failed,
            approve=None,
            reject=None,
            reason="",
            by=None,
            fetch=None,
            inputs=inputs,
            **opts,
        )
    return runs.run(
        Path(given.first),
        parse_inputs(given.inputs),
        run_id=given.run_id,
        base=given.base,
        **opts,
    )
