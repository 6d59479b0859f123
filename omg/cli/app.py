"""The typer app: the commands in the order `omg --help` lists them, each one function of a
command group, and the one error handler.

Commands import their modules lazily so `omg lint` (a pre-commit hook) starts fast.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Annotated

# Plain help and errors: typer's rich extras cost ~150 ms at every start (a pre-commit hook's
# budget); set before typer is imported, it reaches no child (child environments are
# allow-lists).
os.environ.setdefault("TYPER_USE_RICH", "0")

import typer

from omg.cli import exits, graph_commands, job_commands, run_commands, view_commands
from omg.cli.next import next_step
from omg.cli.options import OUTCOME
from omg.errors import OmgError

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


def main() -> None:
    """Console entry point: one error handler for every command."""
    OUTCOME.clear()
    try:
        app(prog_name="omg")  # `python -m omg` too: completion's variable is _OMG_COMPLETE
    except OmgError as exc:
        if OUTCOME:  # run/resume --format json: the refusal is their outcome line
            from omg.cli import machine

            error = _masked(str(exc))
            line = machine.refusal(OUTCOME["run_id"], exits.BY_REFUSAL[exc.kind], error)
            print(machine.dumps(line))
        hint = f"; {next_step(exc.hint)}" if exc.hint is not None else ""
        print(_masked(f"omg: {exc}{hint}"), file=sys.stderr)
        sys.exit(exits.BY_REFUSAL[exc.kind])
    except KeyboardInterrupt:
        print("omg: interrupted", file=sys.stderr)
        sys.exit(exits.INTERRUPTED)
    except Exception:
        print(
            "omg: unexpected error — this is a bug in omg; please report it with the "
            "traceback below",
            file=sys.stderr,
        )
        print(_masked(traceback.format_exc()), end="", file=sys.stderr)
        sys.exit(exits.BUG)


def _masked(text: str) -> str:
    """An error as a job log may show it: omg's own secrets masked (an error can quote one)."""
    from omg.mask import Masker

    return Masker.from_env(os.environ).text(text)
