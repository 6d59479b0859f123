"""The command line: the only code that prints or picks exit codes."""

from __future__ import annotations

__all__ = ["main"]


def main() -> None:
    """The `omg` console script (typer is imported only here, so `python -m omg.lint` is fast)."""
    from omg.cli.app import main as run

    run()
