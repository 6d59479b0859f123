"""The ledger: the end-of-leg table of every node's verdict, round, attempts, cost and detail."""

from __future__ import annotations

from omg.graph.durations import format_duration
from omg.graph.model import Graph
from omg.state import NodeRecord, State

COLUMNS = ("NODE", "VERDICT", "ROUND", "TRIES", "COST", "TIME", "DETAIL")


def verdict_cell(rec: NodeRecord | None) -> str:
    if rec is None:
        return "-"
    if rec.get("awaiting"):
        return "AWAITING"
    v = rec.get("verdict") or ("LOOPING" if rec.get("round") else "PENDING")
    prov = rec.get("provenance")
    return f"{v} ({prov})" if v == "PASS" and prov else v


def rows(graph: Graph, state: State) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for nid in graph.topo_order:
        rec = state["nodes"].get(nid)
        if rec is None:
            out.append((nid, "-", "", "", "", "", ""))
            continue
        cost = "unknown" if rec.get("cost_unknown") else f"${rec.get('cost_usd', 0.0):.4f}"
        detail = str(rec.get("detail") or "")
        if len(detail) > 90:
            detail = detail[:89] + "…"
        out.append(
            (
                nid,
                verdict_cell(rec),
                str(rec.get("round", 0)),
                str(rec.get("attempts", 0)),
                cost,
                format_duration(float(rec.get("duration_s", 0.0))) if "duration_s" in rec else "",
                detail,
            )
        )
    return out


def render(graph: Graph, state: State) -> str:
    """A fixed-width table with a total line and a count of retries, rounds and send-backs."""
    body = rows(graph, state)
    widths = [max(len(r[i]) for r in [COLUMNS, *body]) for i in range(len(COLUMNS))]

    def line(r: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()

    rule = "-" * len(line(tuple("x" * w for w in widths)))
    out = [f"Run {state['run_id']} — {len(graph.nodes)} node(s)", line(COLUMNS), rule]
    out += [line(r) for r in body]
    out.append(rule)
    nodes = state["nodes"].values()
    retries = sum(int(r.get("retries", 0)) for r in nodes)
    rejected = sum(1 for g in state["gates"].values() if g.get("decision") == "reject")
    total = f"${state['cost_usd']:.4f}"
    if any(r.get("cost_unknown") for r in nodes):
        total = f"unknown (known subtotal {total})"
    out.append(
        f"TOTAL COST: {total}   retries: {retries}   feedback rounds: {state['hops']}   "
        f"send-backs: {rejected}"
    )
    return "\n".join(out)
