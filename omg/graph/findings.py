"""Findings: one problem or advisory about a graph file, located by file, line and node."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

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
