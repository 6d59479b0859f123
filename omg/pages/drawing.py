"""A run's graph drawn in SVG: nodes in layers by depth (left to right), each coloured by its
verdict, ``depends_on`` edges, feedback arcs dashed, a spliced loop's nodes boxed together."""

from __future__ import annotations

from collections.abc import Mapping

from omg.graph.model import Graph
from omg.pages.page import esc
from omg.pages.svg import fit, frame, label, tip

BOX_W, BOX_H = 180, 46
COL, ROW = 236, 64
PAD = 24


def depths(graph: Graph) -> dict[str, int]:
    """Each node's layer: 0 with no ``depends_on``, else one past its deepest parent."""
    out: dict[str, int] = {}
    for nid in graph.topo_order:
        parents = graph.node(nid).depends_on
        out[nid] = 1 + max((out[p] for p in parents), default=-1)
    return out


def layout(graph: Graph) -> dict[str, tuple[float, float]]:
    """Each node's top-left corner: its column by depth, its row by declaration order."""
    layers: dict[int, list[str]] = {}
    for nid, d in depths(graph).items():
        layers.setdefault(d, []).append(nid)
    where: dict[str, tuple[float, float]] = {}
    for d, ids in layers.items():
        for row, nid in enumerate(sorted(ids, key=graph.index.__getitem__)):
            where[nid] = (PAD + d * COL, PAD + 18 + row * ROW)
    return where


def graph_svg(graph: Graph, status: Mapping[str, str], notes: Mapping[str, str]) -> str:
    """The graph; ``status`` names each node's class (passed, failed, paused, pending, looping,
    running), ``notes`` a line under its id (text)."""
    where = layout(graph)
    width = max((x for x, _ in where.values()), default=0) + BOX_W + PAD
    height = max((y for _, y in where.values()), default=0) + BOX_H + PAD + 40
    parts: list[str] = [_groups(graph, where)]
    for node in graph.nodes:
        x2, y2 = where[node.id]
        for parent in node.depends_on:
            x1, y1 = where[parent]
            sx, sy, ex, ey = x1 + BOX_W, y1 + BOX_H / 2, x2, y2 + BOX_H / 2
            mid = (sx + ex) / 2
            parts.append(
                f'<path class="edge" d="M{sx:.0f},{sy:.0f} C{mid:.0f},{sy:.0f} {mid:.0f},'
                f'{ey:.0f} {ex - 6:.0f},{ey:.0f}" marker-end="url(#arrow)">'
                f"{tip(f'{parent} → {node.id}')}</path>"
            )
    for node in graph.nodes:
        if node.feedback is None or node.feedback.rerun not in where:
            continue
        (fx, fy), (tx, ty) = where[node.id], where[node.feedback.rerun]
        sx, tx2 = fx + BOX_W / 2, tx + BOX_W / 2
        low = max(fy, ty) + BOX_H + 26
        parts.append(
            f'<path class="arc" d="M{sx:.0f},{fy + BOX_H:.0f} C{sx:.0f},{low:.0f} {tx2:.0f},'
            f'{low:.0f} {tx2:.0f},{ty + BOX_H + 6:.0f}" marker-end="url(#arrow)">'
            f"{tip(f'feedback: {node.id} re-runs {node.feedback.rerun} (at most {node.feedback.max} rounds)')}</path>"  # noqa: E501
        )
    for node in graph.nodes:
        x, y = where[node.id]
        cls = status.get(node.id, "pending")
        note = notes.get(node.id, "")
        said = f"{node.id} ({node.kind}): {cls}" + (f" — {note}" if note else "")
        if node.description:
            said += f"\n{node.description}"
        parts.append(
            f'<g class="node" data-node="{esc(node.id)}" data-status="{esc(cls)}">{tip(said)}'
            f'<rect class="{esc(cls)}" x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6" '
            f'stroke-width="1.5"/>'
            + label(x + 8, y + 18, fit(node.id, BOX_W - 16))
            + label(x + 8, y + 35, fit(note, BOX_W - 16), cls="small")
            + "</g>"
        )
    arrow = (
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="#818b98"/></marker></defs>'
    )
    return frame(width, height, arrow + "".join(parts), cls="graph", name=f"graph {graph.name}")


def _groups(graph: Graph, where: Mapping[str, tuple[float, float]]) -> str:
    """A box behind the nodes of each spliced use (ids sharing a ``<use>/`` prefix)."""
    groups: dict[str, list[str]] = {}
    for nid in graph.ids:
        if "/" in nid:
            groups.setdefault(nid.rsplit("/", 1)[0], []).append(nid)
    out = []
    for prefix, ids in groups.items():
        xs = [where[i][0] for i in ids]
        ys = [where[i][1] for i in ids]
        x, y = min(xs) - 10, min(ys) - 22
        w, h = max(xs) - min(xs) + BOX_W + 20, max(ys) - min(ys) + BOX_H + 32
        out.append(
            f'<g class="use"><rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" '
            f'fill="none" stroke="#d1d9e0" stroke-dasharray="3 3"/>'
            + label(x + 8, y + 14, fit(prefix, w - 16), cls="small")
            + "</g>"
        )
    return "".join(out)
