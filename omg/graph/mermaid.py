"""The Mermaid rendering of a graph: a flowchart, optionally coloured by node status."""

from __future__ import annotations

from collections.abc import Mapping

from omg.graph.model import Graph, Node
from omg.kinds import EXHAUSTED_GATE_SUFFIX

#: What GitHub's Mermaid draws at most: its ``maxEdges`` and ``maxTextSize`` defaults (a
#: larger diagram shows an error instead of the graph).
MAX_EDGES = 500
MAX_TEXT = 50_000
#: Boxes of a grouped diagram at most: arrows between every pair of them both ways, and a
#: loop on each, stay within ``MAX_EDGES`` (22² = 484).
BANDS = 22
#: Node ids a grouped diagram's box names before "… and N more".
SHOWN_IDS = 6

#: status → (fill, stroke, text colour); GitHub renders these in step summaries and comments.
STYLES = {
    "passed": ("#d3f9d8", "#2b8a3e", "#0b3d17"),
    "failed": ("#ffe3e3", "#c92a2a", "#5c0b0b"),
    "running": ("#d0ebff", "#1864ab", "#0b2a4a"),
    "paused": ("#fff3bf", "#e67700", "#4a2800"),
    "pending": ("#f1f3f5", "#868e96", "#343a40"),
}


_ENTITIES = {"#": "#35;", "&": "#amp;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "`": "#96;"}


def escape(text: str) -> str:
    """A label safe inside Mermaid's double quotes: entity codes for the characters it parses
    (``#`` itself, quotes, tags, and the backtick that starts a Markdown label), one line."""
    out = "".join(_ENTITIES.get(ch, ch) for ch in text)
    return " ".join(out.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def edge_count(graph: Graph) -> int:
    """The edges ``render_mermaid`` draws: depends_on arrows, feedback arcs, escalations."""
    ids = set(graph.ids)
    count = 0
    for n in graph.nodes:
        count += sum(1 for p in n.depends_on if p in ids)
        fb = n.feedback
        if fb is not None and fb.rerun in ids:
            count += 2 if fb.on_exhausted == "gate" else 1
    return count


def _shape(node: Node, key: str) -> str:
    label = f'"{escape(node.id)}<br/>({node.kind})"'
    if node.kind == "gate":
        return f"{key}{{{{{label}}}}}"
    if node.kind == "shell":
        return f"{key}[[{label}]]"
    return f"{key}[{label}]"


def render_mermaid(graph: Graph, status: Mapping[str, str] | None = None) -> str:
    """``flowchart TD``: agents as boxes, shell nodes as subroutines, gates as hexagons,
    depends_on as arrows, feedback arcs as dashed back-edges labelled with their bound.

    With ``status`` (node id → passed/failed/running/paused/pending) nodes are coloured;
    a node missing from it is pending.
    """
    key = {nid: f"n{i}" for i, nid in enumerate(graph.ids)}
    lines = ["flowchart TD"]
    lines += [f"  {_shape(n, key[n.id])}" for n in graph.nodes if "/" not in n.id]
    lines += _subgraphs(graph, key)
    for n in graph.nodes:
        lines += [f"  {key[p]} --> {key[n.id]}" for p in n.depends_on if p in key]
    escalations: dict[str, str] = {}
    for n in graph.nodes:
        fb = n.feedback
        if fb is None or fb.rerun not in key:
            continue
        lines.append(f'  {key[n.id]} -. "max {fb.max}" .-> {key[fb.rerun]}')
        if fb.on_exhausted == "gate":
            gate = n.id + EXHAUSTED_GATE_SUFFIX
            escalations[gate] = f"x{len(escalations)}"
            lines.append(f'  {escalations[gate]}{{{{"{escape(gate)}<br/>(gate)"}}}}')
            lines.append(f'  {key[n.id]} -. "exhausted" .-> {escalations[gate]}')
    if status is not None:
        lines += [
            f"  classDef {name} fill:{fill},stroke:{stroke},color:{color}"
            for name, (fill, stroke, color) in STYLES.items()
        ]
        groups: dict[str, list[str]] = {}
        for nid in graph.ids:
            state = status.get(nid, "pending")
            groups.setdefault(state if state in STYLES else "pending", []).append(key[nid])
        for gate, gkey in escalations.items():
            if gate in status:
                groups.setdefault(status[gate] if status[gate] in STYLES else "pending", []).append(
                    gkey
                )
        lines += [f"  class {','.join(keys)} {name}" for name, keys in groups.items()]
    return "\n".join(lines) + "\n"


def _subgraphs(graph: Graph, key: Mapping[str, str]) -> list[str]:
    """The nodes spliced from a multi-node fragment (ids ``<using-id>/<id>``), each use drawn
    as a subgraph titled by its using id; a fragment inside a fragment nests."""
    groups: dict[str, list[Node]] = {}
    for n in graph.nodes:
        if "/" in n.id:
            groups.setdefault(n.id.rsplit("/", 1)[0], []).append(n)
    for prefix in list(groups):
        parts = prefix.split("/")
        for i in range(1, len(parts)):
            groups.setdefault("/".join(parts[:i]), [])
    names = {prefix: f"s{i}" for i, prefix in enumerate(groups)}
    lines: list[str] = []

    def emit(prefix: str, indent: str) -> None:
        lines.append(f'{indent}subgraph {names[prefix]}["{escape(prefix)}"]')
        lines.extend(f"{indent}  {_shape(n, key[n.id])}" for n in groups[prefix])
        for child in groups:
            if "/" in child and child.rsplit("/", 1)[0] == prefix:
                emit(child, indent + "  ")
        lines.append(f"{indent}end")

    for prefix in groups:
        if "/" not in prefix:
            emit(prefix, "  ")
    return lines


def fits(graph: Graph, text: str) -> bool:
    """Whether Mermaid's default configuration draws ``text``, the diagram of ``graph``: its
    ``maxEdges`` and ``maxTextSize`` are secure settings, which a diagram cannot raise."""
    return edge_count(graph) <= MAX_EDGES and len(text) <= MAX_TEXT


def render_grouped(graph: Graph) -> str:
    """``flowchart TD`` of ``graph`` drawn by depth (the longest depends_on path to a node),
    so Mermaid's defaults draw it whatever its size: one box per depth — a band of depths past
    ``BANDS`` of them — naming its nodes, an arrow labelled with the count for each pair of
    boxes depends_on joins, and a dashed one for each pair a feedback arc joins."""
    depth: dict[str, int] = {}
    for nid in graph.topo_order:
        parents = [depth[p] for p in graph.node(nid).depends_on if p in depth]
        depth[nid] = 1 + max(parents) if parents else 0
    levels = max(depth.values(), default=0) + 1
    band = {nid: d * BANDS // levels if levels > BANDS else d for nid, d in depth.items()}
    members: dict[int, list[str]] = {}
    for nid in graph.ids:
        members.setdefault(band[nid], []).append(nid)
    lines = ["flowchart TD"]
    for b, ids in sorted(members.items()):
        lines.append(f'  b{b}["{_box(graph, ids, sorted({depth[i] for i in ids}))}"]')
    joins: dict[tuple[int, int], int] = {}
    arcs: dict[tuple[int, int], int] = {}
    for n in graph.nodes:
        for p in n.depends_on:
            if p in band and band[p] != band[n.id]:
                pair = (band[p], band[n.id])
                joins[pair] = joins.get(pair, 0) + 1
        if n.feedback is not None and n.feedback.rerun in band:
            pair = (band[n.id], band[n.feedback.rerun])
            arcs[pair] = arcs.get(pair, 0) + 1
    lines += [f'  b{a} -- "{k} edge(s)" --> b{b}' for (a, b), k in sorted(joins.items())]
    lines += [f'  b{a} -. "{k} feedback arc(s)" .-> b{b}' for (a, b), k in sorted(arcs.items())]
    return "\n".join(lines) + "\n"


def _box(graph: Graph, ids: list[str], depths: list[int]) -> str:
    """A grouped diagram's box: its depths, how many nodes of each kind, the first ids."""
    kinds: dict[str, int] = {}
    for nid in ids:
        kinds[graph.node(nid).kind] = kinds.get(graph.node(nid).kind, 0) + 1
    where = f"depth {depths[0]}" + (f"–{depths[-1]}" if len(depths) > 1 else "")
    what = ", ".join(f"{k} {kind}" for kind, k in kinds.items())
    more = len(ids) - SHOWN_IDS
    named = ", ".join(ids[:SHOWN_IDS]) + (f" … and {more} more" if more > 0 else "")
    return f"{where}: {len(ids)} node(s), {what}<br/>{escape(named)}"
