"""The locator: turns (node, field) into a Finding with file, line and column."""

from __future__ import annotations

from typing import TYPE_CHECKING

from omg.graph.findings import Finding, Severity
from omg.graph.positions import Path, Positions, json_path

if TYPE_CHECKING:
    from omg.graph.model import Graph


class Locator:
    """Places findings about one graph: a node's field resolves to its line in the file."""

    def __init__(self, graph: Graph, file: str, positions: Positions | None) -> None:
        self.file = file
        self.positions = positions
        self.index: dict[str, int] = {}
        for i, n in enumerate(graph.nodes):
            self.index.setdefault(n.id, i)

    def path(self, node: str | None, field: str = "", index: int | None = None) -> Path:
        keys = tuple(int(k) if k.isdigit() else k for k in field.split(".")) if field else ()
        if node is None:
            return keys
        i = self.index.get(node, 0) if index is None else index
        return ("nodes", i, *keys)

    def line(self, node: str | None, field: str = "", index: int | None = None) -> int | None:
        return (
            None if self.positions is None else self.positions.at(self.path(node, field, index))[0]
        )

    def finding(
        self,
        code: str,
        message: str,
        node: str | None = None,
        field: str = "",
        *,
        severity: Severity = "error",
        index: int | None = None,
        offset: tuple[int, str] | None = None,
    ) -> Finding:
        """A finding at ``node``'s ``field`` (dotted); ``offset`` = (char offset, field text)."""
        path = self.path(node, field, index)
        line = col = None
        file, via = self.file, ""
        if self.positions is not None:
            file, via = self.positions.origin(path, self.file)
            line, col = self.positions.at(path)
            if offset is not None:
                exact = self.positions.line_in(path, *offset)
                if exact != line:
                    line, col = exact, None
        return Finding(file, line, severity, code, message, node, col, json_path(path), via)
