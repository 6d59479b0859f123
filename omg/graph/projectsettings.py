"""Project settings: what lint says about an agent node loading the checkout's own configuration
(``project_settings: true``) — on a pull request, its author's — or needing it (``agent:``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from omg.graph.findings import Finding
from omg.graph.model import Graph
from omg.runtimes import RULES

if TYPE_CHECKING:
    from omg.graph.locate import Locator


def project_settings(graph: Graph, at: Locator) -> Iterator[Finding]:
    """A warning at each node that opts in (what it lets a pull request do), and at each node
    naming a subagent of the checkout's that its runtime cannot find without opting in."""
    loads = "; ".join(f"{name}: {r.project_files}" for name, r in RULES.items() if r.project_files)
    for n in graph.nodes:
        if n.kind != "agent":
            continue
        if n.project_settings:
            yield at.finding(
                "project-settings",
                f"project_settings: true lets the agent CLI load the checkout's own configuration "
                f"({loads}) — on a pull request its author writes those files, and the hooks "
                "and MCP servers they name run with this node's model key before any gate; drop "
                "it for graphs that run on untrusted pull requests, or run them only on trusted "
                "branches",
                n.id,
                "project_settings",
                severity="warning",
            )
            continue
        found = RULES[n.runtime].subagents
        if n.agent and found is not None and n.agent not in found.built_in:
            yield at.finding(
                "agent-needs-project",
                f"agent: {n.agent} is looked up in the checkout's {found.folder}, which "
                f"{n.runtime} reads only when the node sets project_settings: true (every "
                "execution runs in a configuration home of its own, without your user agents); "
                "set it, or use a built-in agent",
                n.id,
                "agent",
                severity="warning",
            )
