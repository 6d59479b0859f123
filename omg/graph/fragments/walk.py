"""The walk over a fragment's parsed data: every string with its path, and every id or reference
that carries a '/' (a name only a splice may mint)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omg.graph.positions import Path as DataPath


def strings(value: Any, at: DataPath) -> list[tuple[DataPath, str]]:
    if isinstance(value, str):
        return [(at, value)]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in strings(v, (*at, i))]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in strings(v, (*at, k))]
    return []


def slashes(nodes: Any, at: DataPath) -> list[tuple[DataPath, str, Any]]:
    """Every id, depends_on entry, feedback.rerun and placeholder reference holding a '/'."""
    out: list[tuple[DataPath, str, Any]] = []
    if not isinstance(nodes, list):
        return out
    for i, n in enumerate(nodes):
        if not isinstance(n, Mapping):
            continue
        if isinstance(n.get("id"), str) and "/" in n["id"]:
            out.append(((*at, i, "id"), "id", n["id"]))
        deps = n.get("depends_on")
        for k, d in enumerate(deps if isinstance(deps, list) else []):
            if isinstance(d, str) and "/" in d:
                out.append(((*at, i, "depends_on", k), "depends_on", d))
        fb = n.get("feedback")
        if isinstance(fb, Mapping) and isinstance(fb.get("rerun"), str) and "/" in fb["rerun"]:
            out.append(((*at, i, "feedback", "rerun"), "feedback.rerun", fb["rerun"]))
        for path, text in strings(n, (*at, i)):
            for m in _SLASHED.finditer(text):
                out.append((path, "a placeholder", m.group(0)))
    return out


_SLASHED = re.compile(r"\{\{\s*(?:artifacts|feedback)\.[A-Za-z0-9._-]*/[^}]*\}\}")
