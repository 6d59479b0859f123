"""`omg/cli/` is one level deep: the app, then one module per command, which share only leaf
helpers — no command module imports another command module, and no helper imports a command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.arch.test_layering import PACKAGE, module_name, omg_imports

CLI = sorted((PACKAGE / "cli").glob("*.py"))
#: The app: the entry point, the typer app and its command groups (each command's options),
#: which hand each command to its module.
APP = {
    "omg.cli",
    "omg.cli.app",
    "omg.cli.fastleg",  # `omg leg`'s plain command lines and variables, read without typer
    "omg.cli.fastrun",  # `omg run`'s plain command lines, read without typer
    "omg.cli.graph_commands",
    "omg.cli.guard",  # the one error handler the app and the fast path run commands under
    "omg.cli.job_commands",
    "omg.cli.run_commands",
    "omg.cli.view_commands",
}
#: What command modules share: each imports no command module (nor the app).
LEAF_HELPERS = {
    "omg.cli.complete",  # shell completion: run, node and gate ids
    "omg.cli.exits",  # the exit codes
    "omg.cli.fastargs",  # what the typer-free command lines share
    "omg.cli.inputs",  # -i name=value, OMG_INPUTS and the UTF-8 check
    "omg.cli.ledger",  # the run's table
    "omg.cli.machine",  # the --format json documents
    "omg.cli.next",  # the next step to run
    "omg.cli.options",  # the options commands share
    "omg.cli.outcome",  # how a leg run here ended, told
    "omg.cli.progress",  # the live progress lines
    "omg.cli.rehearsal",  # the stand-in model for a `--rehearse` block
    "omg.cli.terminal",  # colour and cursor control, on a terminal only
    "omg.cli.views",  # which ledger was asked for (typer- and table-free)
    "omg.cli.version",  # what omg this is (`--version`, the pin `omg init` writes)
}


def not_helpers(imported: set[str]) -> list[str]:
    """The cli modules among ``imported`` that are not leaf helpers (``from omg.cli import
    exits`` names the package too: that is the helper's import, not the app's)."""
    return sorted(m for m in imported if m.startswith("omg.cli.") and m not in LEAF_HELPERS)


def test_every_cli_module_is_the_app_a_helper_or_a_command() -> None:
    names = {module_name(p) for p in CLI}
    assert names >= APP | LEAF_HELPERS, sorted((APP | LEAF_HELPERS) - names)
    assert len(names - APP - LEAF_HELPERS) >= 8  # the commands: lint, runs, leg, plan, …


@pytest.mark.parametrize("path", CLI, ids=lambda p: p.name)
def test_a_command_or_helper_imports_only_helpers(path: Path) -> None:
    me = module_name(path)
    if me in APP:
        return
    wrong = not_helpers(omg_imports(path))
    kind = "helper" if me in LEAF_HELPERS else "command module"
    assert not wrong, (
        f"{path.name} (a {kind}) imports {wrong}: move what they share into a leaf helper of "
        "omg/cli/ (LEAF_HELPERS here) or below cli/, into omg/ci/ or omg/leg/"
    )


def test_the_check_sees_a_command_importing_a_command() -> None:
    assert not_helpers({"omg.cli", "omg.cli.exits", "omg.ci.comment"}) == []
    assert not_helpers({"omg.cli.job", "omg.cli.options", "omg.cli.app"}) == [
        "omg.cli.app",
        "omg.cli.job",
    ]
