"""Namespacing: a spliced loop's ids put under `<using-id>/`, and references to the using id
pointed at the loop's exit."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from omg.graph.fragments.walk import strings
from omg.graph.positions import Path as DataPath
from omg.graph.positions import Positions
from omg.graphdata import NodeData

if TYPE_CHECKING:
    from omg.graph.fragments.record import SpliceRecord

_REF = re.compile(
    r"(\{\{\s*(?:artifacts|feedback)\.)([A-Za-z0-9][A-Za-z0-9._-]*)(\s*(?:\|[^}]*)?\}\})"
)
_ART = re.compile(r"(\{\{\s*artifacts\.)([A-Za-z0-9][A-Za-z0-9._/-]*)(\s*(?:\|[^}]*)?\}\})")
# `{{ feedback.X }}`, X possibly spliced: from outside a loop it may not name the loop.
_FEEDBACK_OF = re.compile(r"\{\{\s*feedback\.([A-Za-z0-9][A-Za-z0-9._/-]*)\s*\}\}")


def namespace(node: NodeData, ids: set[str], prefix: str) -> dict[str, object]:
    """A fragment node with its own ids (and the references to them) under ``prefix``."""
    out: dict[str, object] = {k: _renamed(v, ids, prefix) for k, v in node.items()}
    out["id"] = prefix + str(node["id"])
    deps = node.get("depends_on")
    if isinstance(deps, list):
        out["depends_on"] = [prefix + d if d in ids else d for d in deps]
    fb = node.get("feedback")
    if isinstance(fb, Mapping) and fb.get("rerun") in ids:
        out["feedback"] = {**_renamed(fb, ids, prefix), "rerun": prefix + str(fb["rerun"])}
    return out


def _renamed(value: Any, ids: set[str], prefix: str) -> Any:
    if isinstance(value, str):
        return _REF.sub(
            lambda m: (
                m.group(1) + (prefix + m.group(2) if m.group(2) in ids else m.group(2)) + m.group(3)
            ),
            value,
        )
    if isinstance(value, list):
        return [_renamed(v, ids, prefix) for v in value]
    if isinstance(value, Mapping):
        return {k: _renamed(v, ids, prefix) for k, v in value.items()}
    return value


def retarget(value: Any, exits: Mapping[str, str]) -> Any:
    """``{{ artifacts.<using-id> }}`` → ``{{ artifacts.<using-id>/<exit> }}``."""
    if isinstance(value, str):
        return _ART.sub(
            lambda m: m.group(1) + exits.get(m.group(2), m.group(2)) + m.group(3), value
        )
    if isinstance(value, list):
        return [retarget(v, exits) for v in value]
    if isinstance(value, Mapping):
        return {k: retarget(v, exits) for k, v in value.items()}
    return value


def alias(
    rec: SpliceRecord,
    out: list[Any],
    exits: Mapping[str, str],
    out_pos: Positions,
    out_at: DataPath,
) -> None:
    """References to a multi-node using id point at its exit; its loop is closed."""
    for k, n in enumerate(out):
        if not isinstance(n, Mapping):
            continue
        node = n  # mutated in place: every node here is a fresh dict or the author's own
        deps = node.get("depends_on")
        if isinstance(deps, list):
            node["depends_on"] = [exits.get(d, d) if isinstance(d, str) else d for d in deps]  # type: ignore[index]
        fb = node.get("feedback")
        if isinstance(fb, Mapping) and fb.get("rerun") in exits:
            rec.located(
                out_pos,
                (*out_at, k, "feedback", "rerun"),
                "feedback-into-loop",
                f'feedback.rerun names "{fb["rerun"]}", a loop spliced from a '
                "fragment — an arc from outside cannot re-enter it; rerun a node "
                "of this graph, or put the arc inside the fragment",
                node,
            )
        for path, text in strings(node, (*out_at, k)):
            for m in _FEEDBACK_OF.finditer(text):
                if m.group(1) in exits:
                    rec.located(
                        out_pos,
                        path,
                        "feedback-of-loop",
                        f"{{{{ feedback.{m.group(1)} }}}} names a loop spliced "
                        "from a fragment — its feedback belongs to the nodes "
                        "inside it",
                        node,
                    )
        for key, value in list(node.items()):
            node[key] = retarget(value, exits)  # type: ignore[index]
