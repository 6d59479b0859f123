"""The reply check: a structured reply validated against its node's output_schema in a child
under a time limit.

A schema with references, combinators or patterns can take time out of all proportion to the
reply (a ``pattern`` like ``^([a-z]+\\s?)+$`` backtracks for years on 41 characters; a recursive
``anyOf`` doubles its work at each level), and jsonschema cannot be interrupted; a child can be
killed. The child runs the same ``replyschema.errors`` the leg would, on the leg's ``sys.path``
(made absolute; ``-E -P``: no ``PYTHON*`` variable, and not the node's workspace it runs in).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omg.runners.process import Spawner, python_child, tail

#: How long one check may take. A sound schema needs milliseconds on the largest reply omg
#: keeps; one that backtracks or recurses without bound needs longer than any leg lasts.
REPLY_CHECK_TIMEOUT_S = 10.0

NESTED = "the reply nests too deeply, or the schema's references go on too long"
_CHILD = """\
import json, sys
paths, schema, value = json.loads(sys.stdin.read())
sys.path[:0] = paths
from omg.replyschema import errors
try:
    out = {"errors": errors(schema, value)}
except RecursionError:
    out = {"unusable": NESTED}
except Exception as exc:  # jsonschema applying a schema the loader let through
    out = {"unusable": f"{type(exc).__name__}: {str(exc)[:200]}"}
sys.stdout.write(json.dumps(out))
""".replace("NESTED", repr(NESTED))


@dataclass(frozen=True)
class Checked:
    """What the check found: each error at its path, or why the schema could not be applied
    (``unusable``, which no correction of the reply mends)."""

    errors: tuple[str, ...] = ()
    unusable: str = ""


def check_reply(
    schema: Any,
    value: Any,
    spawn: Spawner,
    cwd: Path,
    timeout_s: float = REPLY_CHECK_TIMEOUT_S,
) -> Checked:
    """``replyschema.errors(schema, value)``, decided within ``timeout_s``."""
    paths = [os.path.abspath(p) for p in sys.path if p]  # never the child's cwd: a workspace
    try:
        given = json.dumps([paths, schema, value])
    except RecursionError:
        return Checked(unusable=NESTED)
    res = python_child(spawn, ("-E", "-P"), _CHILD, given, cwd, timeout_s)
    if res.timed_out:
        return Checked(unusable=f"the check did not finish within {timeout_s:g}s")
    if res.spawn_error is not None:
        return Checked(unusable=f"could not start the check: {res.spawn_error}")
    try:
        said = json.loads(res.stdout) if res.exit_code == 0 else None
    except ValueError:
        said = None
    if isinstance(said, dict) and isinstance(said.get("unusable"), str):
        return Checked(unusable=said["unusable"])
    if isinstance(said, dict) and isinstance(said.get("errors"), list):
        return Checked(errors=tuple(str(e) for e in said["errors"]))
    return Checked(unusable=f"the check failed (exit {res.exit_code}): {tail(res.stderr)}")
