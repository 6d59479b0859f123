"""The splice's record: its findings, each at the file and line it names, and positions copied
from the file a value came from to where it lands in the resolved data."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from omg.graph.findings import Finding, Severity, show
from omg.graph.fragments.walk import slashes
from omg.graph.positions import Path as DataPath
from omg.graph.positions import Positions, json_path


@dataclass(frozen=True)
class Site:
    """Where a using node is written: its data, its file's positions, its path there, the
    file, the chain of `use:` lines that reached it, and its id."""

    raw: Mapping[str, object]
    pos: Positions
    at: DataPath
    file: str
    via: str
    uid: str | None


class SpliceRecord:
    """Findings and positions kept while one graph file is spliced."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Finding] = []
        self._index: dict[Any, tuple[list[Any], list[Any]]] = {}

    def findings_error(self) -> bool:
        return any(f.severity == "error" for f in self.found)

    def error(
        self,
        file: str,
        pos: Positions,
        path: DataPath,
        code: str,
        message: str,
        via: str = "",
        node: str | None = None,
        severity: Severity = "error",
    ) -> None:
        line, col = pos.at(path)
        self.found.append(
            Finding(file, line, severity, code, message, node, col, json_path(path), via)
        )

    def at_site(self, site: Site, key: str | tuple[str, ...], code: str, message: str) -> None:
        """A finding at ``key`` (or the path of keys) of the using node ``site``."""
        keys = (key,) if isinstance(key, str) else key
        self.error(site.file, site.pos, (*site.at, *keys), code, message, site.via, site.uid)

    def place(
        self,
        pos: Positions,
        src: DataPath,
        out_pos: Positions,
        dst: DataPath,
        file: str,
        via: str,
        keys: set[str] | None = None,
    ) -> None:
        """Copy the positions under ``src`` to ``dst``, marking them as written in ``file``."""
        n = len(src)
        keyed, blocks = self.index(pos, src)
        for p, v in keyed:
            if p[:n] == src and (keys is None or len(p) == n or p[n] in keys):
                out_pos.keys[(*dst, *p[n:])] = v
                if file != self.file or via or keys is not None:
                    out_pos.origins[(*dst, *p[n:])] = (file, via)
        for p, b in blocks:
            if p[:n] == src and (keys is None or p[n] in keys):
                out_pos.blocks[(*dst, *p[n:])] = b
        if (file != self.file or via) and keys is None:
            out_pos.origins[dst] = (file, via)

    def index(self, pos: Positions, src: DataPath) -> tuple[list[Any], list[Any]]:
        """The positions under ``src``, grouped once per positions object and depth."""
        n = len(src)
        if (id(pos), n, None) not in self._index:
            self._index[(id(pos), n, None)] = ([], [])
            for p, v in pos.keys.items():
                self._index.setdefault((id(pos), n, p[:n]), ([], []))[0].append((p, v))
            for p, b in pos.blocks.items():
                self._index.setdefault((id(pos), n, p[:n]), ([], []))[1].append((p, b))
        return self._index.get((id(pos), n, src), ([], []))

    @staticmethod
    def shift(sub: Positions, out_pos: Positions, out_at: DataPath, j: int) -> None:
        """A fragment's node list's positions (``nodes.<i>…``) moved to index ``j + i`` of
        ``out_at``."""
        for p, v in sub.keys.items():
            out_pos.keys[(*out_at, j + int(p[1]), *p[2:])] = v
        for p, b in sub.blocks.items():
            out_pos.blocks[(*out_at, j + int(p[1]), *p[2:])] = b
        for p, o in sub.origins.items():
            out_pos.origins[(*out_at, j + int(p[1]), *p[2:])] = o

    def located(
        self, pos: Positions, path: DataPath, code: str, message: str, node: Mapping[str, object]
    ) -> None:
        file, via = pos.origin(path, self.file)
        self.error(file, pos, path, code, message, via, node_id(node))

    def refuse_slashes(self, nodes: Any, pos: Positions, file: str, via: str, at: DataPath) -> None:
        """An authored '/' in an id or a reference: that namespace is omg's own."""
        for path, what, value in slashes(nodes, at):
            self.error(
                file,
                pos,
                path,
                "authored-namespace",
                f'{what} carries a "/" ({show(value)}) — "<using-id>/<id>" is minted '
                "only when omg splices a multi-node fragment, never written; rename it",
                via,
            )


def node_id(raw: object) -> str | None:
    """A node's id when it is a mapping with a text id."""
    v = raw.get("id") if isinstance(raw, Mapping) else None
    return v if isinstance(v, str) else None


def join(via: str, cite: str) -> str:
    """The chain of `use:` lines ``via`` with ``cite`` added."""
    return f"{via} → {cite}" if via else cite
