"""The command line: the only code that prints or picks exit codes."""

from omg.cli.app import main

__all__ = ["main"]
