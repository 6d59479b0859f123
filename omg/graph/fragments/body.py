"""A fragment file linted on its own: its body checked as the splice would check it once used —
the graph schema's node and each node's own rules, at the fragment's lines; a value holding a
substitution point waits for its binding, and a node citing another fragment for that one."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from itertools import product
from pathlib import Path
from typing import Any

from omg.graph.findings import Finding
from omg.graph.fragments.file import check_text, read_bytes
from omg.graph.fragments.substitution import WITH, WITH_ANY
from omg.graph.fragments.walk import strings
from omg.graph.positions import Path as DataPath
from omg.graph.positions import Positions, json_path

#: The name the probe graph carries (a graph's name form; no finding is about it).
_PROBE = "fragment"
#: What a whole-value point may stand in as while its binding is unknown: a number, a boolean,
#: a list, a mapping (its own text first).
_STAND_INS: tuple[object, ...] = (1, True, [], {})


def lint_fragment(path: Path) -> list[Finding]:
    """Every finding of the fragment file ``path``: as a use reads it, then its body."""
    file = str(path)
    raw = read_bytes(path, file)
    if isinstance(raw, str):
        return [Finding(file, None, "error", "fragment-file", raw)]
    data, pos, found = check_text(raw, file)
    if any(f.severity == "error" for f in found):
        return found
    return [*found, *body_findings(data, pos, file)]


def body_findings(data: Mapping[str, Any], pos: Positions, file: str) -> list[Finding]:
    """The graph schema and each node's own rules on a schema-checked fragment's body, as one
    probe graph whose node ``j`` is the body node at ``homes[j]`` of the fragment."""
    single = "node" in data
    bodies = [data["node"]] if single else list(data["nodes"])
    nodes: list[dict[str, Any]] = []
    homes: list[DataPath] = []
    for i, body in enumerate(bodies):
        if "use" in body:
            continue  # its keys are judged with the fragment it cites, when that is spliced
        nodes.append(copy.deepcopy({"id": data["fragment"], **body} if single else body))
        homes.append(("node",) if single else ("nodes", i))
    if not nodes:
        return []
    probe = {"name": _PROBE, "nodes": nodes}
    at = _moved(pos, homes)
    waiting = {json_path(p) for p, text in strings(nodes, ("nodes",)) if WITH_ANY.search(text)}
    for node in nodes:
        _stand_in(node, [p for p, text in strings(node, ()) if WITH.fullmatch(text.strip())])
    from omg.graph.schema import schema_findings

    found = schema_findings(probe, file, at)
    if not found:
        from omg.graph.build import graph_from_data
        from omg.graph.limits import check_limits
        from omg.graph.validate import node_rules

        graph = graph_from_data(probe)  # type: ignore[arg-type]  # the schema just held it
        found = [*node_rules(graph, file, at), *check_limits(graph, file, at)]
    return [_home(f, homes, single) for f in found if not _waits(f.path, waiting)]


def _stand_in(node: dict[str, Any], wholes: list[DataPath]) -> None:
    """Each whole-value point of ``node`` given the first stand-in (as written, then 1, true,
    [], {}) with which the node fits the schema, so a body is judged, by the compiled check
    alone, before its bindings exist; all are left as written when none fits (or past 4)."""
    from omg.graph.schema import node_check

    check = node_check()
    if not wholes or len(wholes) > 4 or check(node):
        return
    written = [_at(node, p) for p in wholes]
    for combo in product(range(len(_STAND_INS) + 1), repeat=len(wholes)):
        for path, was, pick in zip(wholes, written, combo, strict=True):
            _put(node, path, was if pick == 0 else copy.deepcopy(_STAND_INS[pick - 1]))
        if check(node):
            return
    for path, was in zip(wholes, written, strict=True):
        _put(node, path, was)


def _at(value: Any, path: DataPath) -> Any:
    for key in path:
        value = value[key]
    return value


def _put(value: Any, path: DataPath, new: Any) -> None:
    _at(value, path[:-1])[path[-1]] = new


def _moved(pos: Positions, homes: list[DataPath]) -> Positions:
    """The fragment's positions under each home, moved to the probe's ``nodes.<j>``."""
    out = Positions()
    for j, home in enumerate(homes):
        n = len(home)
        for p, v in pos.keys.items():
            if p[:n] == home:
                out.keys[("nodes", j, *p[n:])] = v
        for p, b in pos.blocks.items():
            if p[:n] == home:
                out.blocks[("nodes", j, *p[n:])] = b
    return out


def _waits(path: str, waiting: set[str]) -> bool:
    """Whether a finding at ``path`` is about a value a binding has yet to give."""
    return any(path == w or path.startswith((w + ".", w + "[")) for w in waiting)


def _home(f: Finding, homes: list[DataPath], single: bool) -> Finding:
    """A probe finding told in the fragment's terms: its path there, no id it never had."""
    for j, home in enumerate(homes):
        probe = f"$.nodes[{j}]"
        if f.path == probe or f.path.startswith((probe + ".", probe + "[")):
            f = replace(f, path=json_path(home) + f.path[len(probe) :])
            break
    return replace(f, node=None) if single else f
