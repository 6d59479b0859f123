"""The fan-out plan: which ready nodes may run now on separate machines, as matrix entries —
a pure decision over the graph and the run's records."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from omg import schedule
from omg.graph.model import Graph

#: GitHub runs at most this many jobs from one matrix.
GITHUB_MATRIX_LIMIT = 256


@dataclass(frozen=True)
class MatrixEntry:
    """One matrix job: ``node`` names it; ``nodes`` run in it, in graph order."""

    node: str
    nodes: tuple[str, ...]
    lane: str | None  # the worktree lane its nodes share, when they share one


@dataclass(frozen=True)
class Plan:
    entries: tuple[MatrixEntry, ...]
    held: tuple[str, ...]  # ready, but over the concurrency or --max-jobs: the next wave's
    gates: tuple[str, ...]  # ready gates: the fold pauses there, no machine decides them

    def include(self) -> dict[str, list[dict[str, str]]]:
        """``strategy.matrix`` for GitHub: ``{"include": [{"node": …, "nodes": …}, …]}``."""
        return {"include": [{"node": e.node, "nodes": " ".join(e.nodes)} for e in self.entries]}


def plan(graph: Graph, records: schedule.Records, max_jobs: int | None = None) -> Plan:
    """The ready nodes as matrix entries (``entries``), at most ``graph.concurrency``,
    ``max_jobs`` and ``GITHUB_MATRIX_LIMIT`` of them; the rest are held for the next wave."""
    status = schedule.statuses(graph, records)
    if graph.on_fail == "halt" and "failed" in status.values():
        return Plan((), (), ())  # as on one machine: a failure halts every launch
    ready = schedule.ready(graph, status, ())
    gates = tuple(n for n in ready if graph.by_id[n].kind == "gate")
    entries = _entries(graph, ready, gates)
    cap = min(graph.concurrency, max_jobs or GITHUB_MATRIX_LIMIT, GITHUB_MATRIX_LIMIT)
    held = tuple(n for e in entries[cap:] for n in e.nodes if n in ready)
    return Plan(entries[:cap], held, gates)


def entries(graph: Graph, records: schedule.Records) -> tuple[MatrixEntry, ...]:
    """Every matrix entry the records allow now, uncapped: what a published record may be."""
    ready = schedule.ready(graph, schedule.statuses(graph, records), ())
    return _entries(graph, ready, tuple(n for n in ready if graph.by_id[n].kind == "gate"))


def artifact_name(run_id: str, entry: str) -> str:
    """The workflow artifact a matrix job's hand-off is uploaded as, in its wave's run."""
    return f"omg-fanout-{run_id}-{entry}"


def _entries(graph: Graph, ready: list[str], gates: tuple[str, ...]) -> tuple[MatrixEntry, ...]:
    """The ready nodes grouped so that no lane and no session handoff is split across
    machines: ready nodes sharing a worktree lane are one entry, and a node's session-handoff
    children (their only parent it) join its entry. In graph order."""
    order = {nid: i for i, nid in enumerate(graph.topo_order)}
    groups: list[list[str]] = []
    by_lane: dict[str, list[str]] = {}
    children = _session_children(graph)
    for nid in ready:
        if nid in gates:
            continue
        members = [nid, *_chain(children, nid)]
        lanes = _lanes(graph, members)
        joined = next((by_lane[lane] for lane in sorted(lanes) if lane in by_lane), None)
        if joined is None:
            joined = []
            groups.append(joined)
        joined.extend(m for m in members if m not in joined)
        for lane in lanes:
            by_lane[lane] = joined
    out = []
    for g in groups:
        nodes = tuple(sorted(g, key=order.__getitem__))
        shared = sorted(_lanes(graph, nodes))
        out.append(MatrixEntry(nodes[0], nodes, shared[0] if len(shared) == 1 else None))
    return tuple(sorted(out, key=lambda e: order[e.node]))


def _lanes(graph: Graph, nodes: Iterable[str]) -> set[str]:
    return {wt.name for wt in (graph.by_id[n].worktree for n in nodes) if wt is not None}


def _session_children(graph: Graph) -> dict[str, list[str]]:
    """Each node's session-handoff children that depend on nothing else, in graph order."""
    out: dict[str, list[str]] = {}
    for nid in graph.topo_order:
        node = graph.by_id[nid]
        if node.handoff == "session" and len(node.depends_on) == 1:
            out.setdefault(node.depends_on[0], []).append(nid)
    return out


def _chain(children: dict[str, list[str]], nid: str) -> list[str]:
    """The nodes that resume ``nid``'s session, transitively, breadth first."""
    out: list[str] = []
    frontier = [nid]
    while frontier:
        for child in children.get(frontier.pop(0), ()):
            if child not in out:
                out.append(child)
                frontier.append(child)
    return out
