"""The matcher: a success check's regular expression, searched in a child under a time limit.

Python's ``re`` cannot be interrupted, and a pattern like ``^(a+)+$`` backtracks for longer than
any leg lasts on a 40-character reply; a child process can be killed. The child runs the same
``re.search`` the loader compiled the pattern with, so the semantics are exactly Python's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from omg.runners.process import Spawner, python_child, tail

#: How long one search may take. A sound pattern needs milliseconds on the largest output omg
#: keeps (8 MiB); one that backtracks catastrophically needs years.
MATCH_TIMEOUT_S = 10.0

_CHILD = (
    "import json, re, sys\n"
    "pattern, text = json.loads(sys.stdin.read())\n"
    "sys.stdout.write('match' if re.search(pattern, text) else 'none')\n"
)


@dataclass(frozen=True)
class Search:
    """A search's outcome: ``found``, or None with ``error`` when it could not finish."""

    found: bool | None
    error: str = ""
    timed_out: bool = False


def search(
    pattern: str, text: str, spawn: Spawner, cwd: Path, timeout_s: float = MATCH_TIMEOUT_S
) -> Search:
    """Whether ``re.search(pattern, text)`` finds a match, decided within ``timeout_s``."""
    res = python_child(spawn, ("-I", "-S"), _CHILD, json.dumps([pattern, text]), cwd, timeout_s)
    if res.timed_out:
        return Search(None, f"did not finish within {timeout_s:g}s", timed_out=True)
    if res.spawn_error is not None:
        return Search(None, f"could not start the search: {res.spawn_error}")
    if res.exit_code == 0 and res.stdout in ("match", "none"):
        return Search(res.stdout == "match")
    return Search(None, f"the search failed (exit {res.exit_code}): {tail(res.stderr)}")
