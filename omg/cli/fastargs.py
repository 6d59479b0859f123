"""What the typer-free command lines (`fastrun`, `fastleg`) share: the reading of a plain command
line, the signal that typer must answer, a number in the one form typer cannot convert
otherwise, and a path as typer takes it."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

#: Where run directories live unless ``--runs-dir`` says: every command's default.
DEFAULT_RUNS = Path(".omg/runs")
#: A whole number and an amount typer converts to the same value: ASCII digits, at most 18 of
#: them (far inside ``int``'s limit on digits), an amount with one point.
WHOLE = re.compile(r"[0-9]{1,18}")
AMOUNT = re.compile(r"[0-9]{1,18}(\.[0-9]{1,18})?")


class Unusual(Exception):
    """A command line or environment for typer to answer."""


def scan(
    args: list[str], valued: Mapping[str, str], flags: Mapping[str, str], *, positional: bool
) -> tuple[str | None, list[str], dict[str, str]]:
    """A plain command line (the command's name left out) as its one argument (when
    ``positional``), its ``input`` values and every other option's text by its parameter (a
    flag's: ""). Options are ``valued`` and ``flags`` spellings to parameters: ``--opt value``,
    ``--opt=value``, a flag alone; anything else — an unknown option, an option given twice
    (``input`` may repeat), a missing value or one starting with ``-``, a flag given a value, a
    second argument — is Unusual."""
    first: str | None = None
    inputs: list[str] = []
    given: dict[str, str] = {}
    rest = iter(args)
    for arg in rest:
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        key = flags.get(arg) or valued.get(name)
        if key is None:
            if arg.startswith("-") or first is not None or not positional:
                raise Unusual
            first = arg
            continue
        if arg not in flags and not eq:
            value = next(rest, "-")
        if value.startswith("-") or (key in given and key != "input"):
            raise Unusual
        if key == "input":
            inputs.append(value)
        else:
            given[key] = value
    return first, inputs, given


def plain(text: str, form: re.Pattern[str]) -> str:
    """``text`` when it is a number in ``form``, whose conversion typer cannot differ on."""
    if not form.fullmatch(text):
        raise Unusual
    return text


def path(text: str) -> Path:
    """A path as typer takes it: one that exists but cannot be read is typer's to refuse."""
    try:
        os.stat(text)
    except (OSError, ValueError):
        return Path(text)
    if not os.access(text, os.R_OK):
        raise Unusual
    return Path(text)
