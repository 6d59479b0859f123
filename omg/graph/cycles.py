"""Dependency cycles: each strongly connected component of depends_on, told as one cycle path."""

from __future__ import annotations

from omg.graph.model import Graph


def cycles(graph: Graph) -> list[list[str]]:
    """One cycle per strongly connected component, in flow order, closed: ``[a, b, c, a]``.

    Each starts at the component's first-declared node and is the shortest cycle through it.
    Self-dependencies are not cycles here (the validator reports them on their own).
    """
    out = []
    for comp in _components(graph):
        start = min(comp, key=graph.index.__getitem__)
        out.append([*_cycle_through(graph, start, comp), start])
    return out


def _components(graph: Graph) -> list[set[str]]:
    """Strongly connected components of size > 1 over depends_on (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[set[str]] = []
    kids = {nid: [c for c in graph.children[nid] if c != nid] for nid in graph.ids}
    for root in graph.ids:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            if k < len(kids[v]):
                work.append((v, k + 1))
                w = kids[v][k]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


def _cycle_through(graph: Graph, start: str, comp: set[str]) -> list[str]:
    """Shortest path start → … → x (flow order) with x → start closing the cycle."""
    prev: dict[str, str | None] = {start: None}
    queue = [start]
    for v in queue:
        for c in graph.children[v]:
            if c == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])  # type: ignore[arg-type]
                return path[::-1]
            if c in comp and c not in prev:
                prev[c] = v
                queue.append(c)
    return [start]
