"""`omg leg`: one GitHub Actions job, handed to `ci/` (read the trigger → plan → act → report);
here its words are printed and its outcome becomes the exit code (`exits.BY_JOB`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from omg.cli import exits

if TYPE_CHECKING:
    from omg.ci import LegArgs


def say(message: str) -> None:
    """A line of the job's log."""
    print(message, file=sys.stderr)


def annotate(line: str) -> None:
    """A workflow command (an annotation), on stdout where the runner reads it."""
    print(line)


def job(args: LegArgs) -> int:
    """The job ``args`` ask for — a fan-out wave's (``--node``, ``--fold``), else the one its
    trigger asks for — run to its end; its exit code."""
    from omg.ci.job import leg, wave

    run = wave if args.node or args.fold else leg
    return exits.BY_JOB[run(args, os.environ, say, annotate)]
