"""The graph: YAML file → frozen Graph (load, validate, advise, lint, draw); runs nothing.

Names are imported on first use, so `import omg.graph.model` stays as light as that module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from omg.graph.build import graph_from_data
    from omg.graph.findings import Finding
    from omg.graph.lint import collect, lint_files
    from omg.graph.load import (
        check_data,
        check_file,
        graph_from_snapshot,
        load_graph,
        resolve_inputs,
    )
    from omg.graph.mermaid import render_mermaid
    from omg.graph.model import Graph, Node

_WHERE = {
    "Finding": "omg.graph.findings",
    "Graph": "omg.graph.model",
    "Node": "omg.graph.model",
    "check_data": "omg.graph.load",
    "check_file": "omg.graph.load",
    "collect": "omg.graph.lint",
    "graph_from_data": "omg.graph.build",
    "graph_from_snapshot": "omg.graph.load",
    "lint_files": "omg.graph.lint",
    "load_graph": "omg.graph.load",
    "render_mermaid": "omg.graph.mermaid",
    "resolve_inputs": "omg.graph.load",
}
__all__ = [
    "Finding",
    "Graph",
    "Node",
    "check_data",
    "check_file",
    "collect",
    "graph_from_data",
    "graph_from_snapshot",
    "lint_files",
    "load_graph",
    "render_mermaid",
    "resolve_inputs",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'omg.graph' has no attribute {name!r}")
