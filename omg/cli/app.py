"""The typer app: the commands in the order `omg --help` lists them, each one function of a
command group, run under the one error handler (`cli/guard`).

Commands import their modules lazily so `omg lint` (a pre-commit hook) starts fast.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Annotated

# Plain help and errors: typer's rich extras cost ~150 ms at every start (a pre-commit hook's
# budget); set before typer is imported, it reaches no child (child environments are
# allow-lists).
os.environ.setdefault("TYPER_USE_RICH", "0")

import typer
import typer.main

from omg.cli import graph_commands, job_commands, run_commands, view_commands
from omg.cli.guard import guarded
from omg.cli.options import OUTCOME

app = typer.Typer(
    name="omg",
    help="Run graphs of agent sessions and shell checks inside git, one leg at a time.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

#: Every command, as `omg --help` lists them: (name, the function its group holds).
COMMANDS = (
    ("lint", graph_commands.lint),
    ("init", graph_commands.init_command),
    ("graph", graph_commands.graph),
    ("run", run_commands.run),
    ("resume", run_commands.resume),
    ("status", view_commands.status),
    ("log", view_commands.log_command),
    ("replay", view_commands.replay),
    ("clean", run_commands.clean),
    ("prune", job_commands.prune_command),
    ("leg", job_commands.leg_command),
    ("publish", job_commands.publish_command),
    ("plan", job_commands.plan_command),
    ("stub-model", graph_commands.stub_model),
    ("stats", view_commands.stats_command),
    ("report", view_commands.report_command),
)
for _name, _command in COMMANDS:
    app.command(_name)(_command)


def _version(value: bool) -> None:
    if value:
        from omg.cli.version import describe

        print(describe())
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_version,
            help="Print omg's version (and the commit it was installed from) and exit.",
        ),
    ] = False,
) -> None:
    """Run graphs of agent sessions and shell checks inside git, one leg at a time."""


@functools.cache
def command() -> Callable[..., object]:
    """omg's click command, built from ``app`` once per process: calling the typer app builds
    it again from every command's signature, each time (the test kit calls ``main`` thousands
    of times in one process, and its fork server builds this before any child forks)."""
    return typer.main.get_command(app)


def main() -> None:
    """Console entry point: one error handler for every command."""
    OUTCOME.clear()
    # `python -m omg` too: completion's variable is _OMG_COMPLETE
    guarded(lambda: command()(prog_name="omg"), OUTCOME)
