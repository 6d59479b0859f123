"""What a command line gives, checked without typer (the fast paths read it too): a run's
inputs — the lines of ``OMG_INPUTS``, then each ``-i name=value`` — and text that must be
UTF-8."""

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


def utf8(option: str, text: str) -> None:
    """Refuse an option's (or variable's) value that is not valid UTF-8 — bytes the shell
    passed as they were, which no record or prompt can hold — naming it and what is wrong."""
    from omg.words import undecodable

    bad = undecodable(text)
    if bad:
        raise UsageError(f"{option} is not valid UTF-8 ({bad}); give it as UTF-8 text")
