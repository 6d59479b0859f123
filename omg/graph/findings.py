"""Findings: one problem or advisory about a graph file, located by file, line and node, and
how its message names what the user wrote."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

Severity = Literal[
    "error", "warning", "info"
]  # info: a fact (the worst-case price), never a failure


@dataclass(frozen=True)
class Finding:
    """A lint result; ``code`` is a stable slug (e.g. ``cycle``), ``path`` a JSON path."""

    file: str
    line: int | None
    severity: Severity
    code: str
    message: str
    node: str | None = None
    column: int | None = None
    path: str = ""
    #: the ``use:`` lines that spliced this value in from a fragment, outermost first
    via: str = ""

    def as_text(self) -> str:
        """``file:line: error: node "x": message`` (line and node omitted when unknown)."""
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        who = f'node "{self.node}": ' if self.node else ""
        return f"{where}: {self.severity}: {who}{self.message}{self.cited()}"

    def cited(self) -> str:
        """`` (spliced via graph.yaml:12 use: loop)`` for a value from a fragment, else ``""``."""
        return f" (spliced via {self.via})" if self.via else ""


_RANK = {"error": 0, "warning": 1, "info": 2}


def ordered(found: Sequence[Finding]) -> list[Finding]:
    """Failures and warnings by line (the worst first on a line), then the informational ones."""
    return sorted(found, key=lambda f: (f.severity == "info", f.line or 0, _RANK[f.severity]))


def show(value: Any) -> str:
    """A value as the user wrote it, short: strings quoted, YAML spellings for the rest."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:56] + '…"'
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return f"the date {value.isoformat()}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, int) and abs(value) >= 10**20:
        digits = len(str(abs(value)))
        return f"a {digits}-digit number"
    return str(value)


def unknown_key(key: str, allowed: list[str], parent: str) -> str:
    """An unknown key named, with the closest allowed one when there is one, and every key."""
    import difflib

    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    guess = f' — did you mean "{close[0]}"? Allowed' if close else " — allowed"
    return f'unknown key "{key}" in {parent}{guess} keys: {", ".join(allowed)}'
