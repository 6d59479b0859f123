"""Pure: the ledger as rows of text cells — one per execution (or per node), each detail made
inert and cut to one line, each cost in dollars or "unknown"; what `omg status`, the PR
comment, the step summary and the run page show."""

from __future__ import annotations

from omg.graph.durations import format_duration
from omg.graph.model import Graph
from omg.state import NodeRecord, State
from omg.state.ledger import Ledger, Limits
from omg.words import inert

COLUMNS = ("NODE", "VERDICT", "ROUND", "TRIES", "COST", "TIME", "DETAIL")
EXECUTION_COLUMNS = ("NODE", "LEG", "VERDICT", "ROUND", "TRIES", "COST", "TIME", "DETAIL")
DETAIL_WIDTH = 90


def limits(graph: Graph) -> Limits:
    """Each body node's loop max and each node's retry max: what a row's detail counts up to."""
    rounds = {}
    for nid, owner in graph.body_owner.items():
        fb = graph.node(owner).feedback
        if fb is not None:
            rounds[nid] = fb.max
    return Limits(rounds, {n.id: n.retry.max for n in graph.nodes if n.retry.max})


def _clip(text: str) -> str:
    """A detail cell: one line of at most DETAIL_WIDTH characters, no control character sent."""
    text = inert(text)
    return text if len(text) <= DETAIL_WIDTH else text[: DETAIL_WIDTH - 1] + "…"


def _cost(usd: float, unknown: bool, tokens: int = 0) -> str:
    """A cost cell: dollars, or "unknown" with the tokens used (a runtime reporting tokens
    without a price for them), never $0.0000 for work that was done."""
    if not unknown:
        return f"${usd:.4f}"
    return f"unknown ({tokens} tokens)" if tokens else "unknown"


def execution_rows(graph: Graph, book: Ledger) -> list[tuple[str, ...]]:
    """One row per execution in the order they started, then every node that never ran."""
    out: list[tuple[str, ...]] = []
    clipped: dict[str, str] = {}  # a long run repeats its details: each is made inert once
    for r in book.rows:
        verdict = f"PASS ({r.provenance})" if r.verdict == "PASS" and r.provenance else r.verdict
        took = format_duration(float(r.duration_s)) if r.duration_s is not None else ""
        detail = clipped.get(r.detail)
        if detail is None:
            detail = clipped[r.detail] = _clip(r.detail)
        row = (r.node_id, str(r.leg), verdict, str(r.round), str(r.attempts))
        out.append((*row, _cost(r.cost_usd, r.cost_unknown, r.tokens), took, detail))
    ran = {r.node_id for r in book.rows}
    out += [(nid, "", "-", "", "", "", "", "") for nid in graph.topo_order if nid not in ran]
    return out


def verdict_cell(rec: NodeRecord | None) -> str:
    """A node's verdict as a cell: PASS (how), FAIL, AWAITING, LOOPING, PENDING or -."""
    if rec is None:
        return "-"
    if rec.get("awaiting"):
        return "AWAITING"
    v = rec.get("verdict") or ("LOOPING" if rec.get("round") else "PENDING")
    prov = rec.get("provenance")
    return f"{v} ({prov})" if v == "PASS" and prov else v


def node_rows(graph: Graph, state: State) -> list[tuple[str, ...]]:
    """One row per node in graph order: its record as state.json holds it."""
    out: list[tuple[str, ...]] = []
    for nid in graph.topo_order:
        rec = state["nodes"].get(nid)
        if rec is None:
            out.append((nid, "-", "", "", "", "", ""))
            continue
        used = rec.get("usage") or {}
        tokens = int(used.get("input_tokens", 0)) + int(used.get("output_tokens", 0))
        cost = _cost(float(rec.get("cost_usd", 0.0)), bool(rec.get("cost_unknown")), tokens)
        detail = _clip(str(rec.get("detail") or ""))
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


def spent_unknown(usd: float, tokens: int) -> str:
    """A total some of whose executions had no known cost: the tokens they used, and the
    subtotal of those that had one."""
    used = f"{tokens} tokens unpriced; " if tokens else ""
    return f"unknown ({used}known subtotal ${usd:.4f})"
