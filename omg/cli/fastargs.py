"""What the typer-free command lines (`fastrun`, `fastleg`) share: the signal that typer must
answer, a number in the one form typer cannot convert otherwise, and a path as typer takes it."""

from __future__ import annotations

import os
import re
from pathlib import Path

#: Where run directories live unless ``--runs-dir`` says: every command's default.
DEFAULT_RUNS = Path(".omg/runs")
#: A whole number and an amount typer converts to the same value: ASCII digits, at most 18 of
#: them (far inside ``int``'s limit on digits), an amount with one point.
WHOLE = re.compile(r"[0-9]{1,18}")
AMOUNT = re.compile(r"[0-9]{1,18}(\.[0-9]{1,18})?")


class Unusual(Exception):
    """A command line or environment for typer to answer."""


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
