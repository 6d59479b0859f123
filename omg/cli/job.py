"""`omg leg` and `omg publish`: one GitHub Actions job, handed to `ci/` (read the trigger → plan
→ act → report; or a leg's hand-off verified, then published); here its words are printed and
its outcome becomes the exit code (`exits.BY_JOB`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
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


def publish(artifact: Path, args: LegArgs) -> int:
    """The publish job of a leg split in two: the run job's hand-off in ``artifact`` verified,
    then pushed and published; its exit code (a refused hand-off is refused: exit 3)."""
    from omg.ci.publish import publish as publish_job

    return exits.BY_JOB[publish_job(artifact, args, os.environ, say, annotate)]
