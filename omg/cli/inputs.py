"""A run's inputs as given: the lines of ``OMG_INPUTS``, then each ``-i name=value``."""

from __future__ import annotations

import os

from omg.errors import UsageError


def parse_inputs(pairs: list[str]) -> dict[str, str]:
    """``-i`` values after the lines of ``OMG_INPUTS`` (the way to give a secret input: a
    command line is readable by every process on the machine, the environment is not)."""
    lines = os.environ.get("OMG_INPUTS", "").splitlines()
    given = [(f"OMG_INPUTS line {n}", ln) for n, ln in enumerate(lines, 1) if ln.strip()]
    out = {}
    for where, pair in [*given, *((f"input {p!r}", p) for p in pairs)]:
        name, sep, value = pair.partition("=")
        if not sep or not name:  # a line of OMG_INPUTS is not shown: it may hold a secret
            raise UsageError(f"{where} must look like name=value")
        out[name] = value
    return out
