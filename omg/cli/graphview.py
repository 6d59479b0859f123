"""`omg graph`: a graph as a Mermaid flowchart — grouped by depth when Mermaid's default
configuration would refuse the whole diagram, saying so on stderr."""

from __future__ import annotations

import sys
from pathlib import Path

from omg.graph.load import load_graph
from omg.graph.mermaid import (
    MAX_EDGES,
    MAX_TEXT,
    edge_count,
    fits,
    render_grouped,
    render_mermaid,
)


def show(path: Path, *, full: bool) -> None:
    """Print the diagram of the graph at ``path``: the whole of it when Mermaid's defaults draw
    it (or ``full`` asks), else grouped by depth, with why and what to do on stderr."""
    graph = load_graph(path)
    text = render_mermaid(graph)
    if full or fits(graph, text):
        print(text, end="")
        return
    edges = edge_count(graph)
    print(render_grouped(graph), end="")
    print(
        f"omg graph: {path}: the whole diagram has {len(graph.nodes):,} nodes, {edges:,} edges "
        f"and {len(text):,} characters; Mermaid's default configuration draws at most "
        f"{MAX_EDGES} edges and {MAX_TEXT:,} characters, and a diagram cannot raise either "
        "(maxEdges and maxTextSize are secure settings: an init directive or front matter is "
        "ignored). Printed the graph grouped by depth instead, which renders wherever it is "
        "pasted. For every node and edge, `omg graph --full FILE` and a renderer you configure "
        "yourself: mermaid.initialize({maxEdges: N, maxTextSize: M}), or mermaid-cli's "
        '`mmdc -c config.json` with {"maxEdges": N, "maxTextSize": M}.',
        file=sys.stderr,
    )
