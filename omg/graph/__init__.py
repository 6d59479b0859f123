"""The graph: YAML file → frozen Graph (load, validate, advise, lint, draw); runs nothing.

`model` (the frozen `Graph`) is built from the parsed file: `yamlpos` (YAML to plain data, the
line and column of every key, kept in `positions`, which imports no YAML), `schema`, `build`,
`validate` (+ `cycles`, `feedback`, `references`, `tokens` — the placeholder grammar —,
`limits`), `placeholders` (rendered: in shell text a variable's reference), `advise`,
`findings`/`locate`, `load` (+ input resolution; `files`, where a graph file and its fragments
are read: the disk, or a commit's tree `git/` hands in), `lint` (which files; `scriptcheck`, a
stub-model script's findings, shared with `stubmodel/` so loading a script never imports lint),
`workflows` (pure: a GitHub workflow file given to `omg lint` — the workflow its legs dispatch
the next leg to takes `run-id` alone, and no more than GitHub's 25 inputs), `mermaid` (the
flowchart; past what Mermaid's default configuration draws — 500 edges, 50,000 characters,
secure settings no directive in a diagram can raise — a diagram grouped by depth instead),
`durations`, `advise_loops` (the advisories review-loop linters elsewhere give: a verdict no
check reads, an unanchored `result_matches`, `bypassPermissions`, a `max_hops` below the loops'
worst case) with `verdicts` (pure: the verdict tokens a prompt demands, as people phrase them),
`projectsettings` (the advisories on an agent node loading the checkout's own configuration:
`project_settings: true`, a subagent of `.claude/agents/` without it). Two concerns have
packages of their own: `shell` (the shell scanner: where a placeholder stands in shell text, and
whether a value may) and `fragments` (the fragment splice: `use:` / `with:` spliced into the
parsed data before any check). Structured replies: `structured` (pure: an `output_schema`
checked, the fields `output_equals` and `feedback.findings` name, and `{{ outputs.NODE.FIELD }}`
resolved upstream) and `schemafiles` (an `output_schema` file read from the repository into the
graph's data, so a run's snapshot holds the schema).

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
