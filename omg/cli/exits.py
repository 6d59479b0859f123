"""Exit codes: the one table every command (and every workflow keying on them) reads.

| code | meaning |
|---|---|
| 0  | passed (for `omg leg`: any clean leg end) |
| 1  | the run failed, or lint found errors |
| 2  | usage error: the command line is wrong |
| 3  | refused: nothing ran (invalid graph, bad input, damaged or conflicting state) |
| 4  | paused: at a gate or for the leg budget (`run` / `resume`) |
| 70 | unexpected error: a bug in omg (EX_SOFTWARE); the traceback follows |
| 130 | interrupted (Ctrl-C) |
"""

from __future__ import annotations

from typing import Final

from omg.errors import Refusal
from omg.kinds import JobOutcome, Outcome

PASSED: Final = 0
FAILED: Final = 1
USAGE: Final = 2
REFUSED: Final = 3
PAUSED: Final = 4
BUG: Final = 70
INTERRUPTED: Final = 130

#: How a leg's outcome exits `omg run` / `omg resume`.
BY_OUTCOME: dict[Outcome, int] = {"passed": PASSED, "failed": FAILED, "paused": PAUSED}
#: How a GitHub Actions job's outcome exits `omg leg`.
BY_JOB: dict[JobOutcome, int] = {"clean": PASSED, "failed": FAILED}
#: How an OmgError exits any command.
BY_REFUSAL: dict[Refusal, int] = {"usage": USAGE, "refused": REFUSED}
