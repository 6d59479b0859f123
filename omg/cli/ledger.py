"""The ledger table: one row per execution (or, ``--by-node``, per node), and the totals line."""

from __future__ import annotations

from collections.abc import Iterable

from omg.cli.terminal import PLAIN, Paint, Tone, inert
from omg.graph.durations import format_duration
from omg.graph.model import Graph
from omg.state import Event, NodeRecord, State
from omg.state.ledger import Ledger, Limits, ledger

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
    for r in book.rows:
        verdict = f"PASS ({r.provenance})" if r.verdict == "PASS" and r.provenance else r.verdict
        took = format_duration(float(r.duration_s)) if r.duration_s is not None else ""
        row = (r.node_id, str(r.leg), verdict, str(r.round), str(r.attempts))
        out.append((*row, _cost(r.cost_usd, r.cost_unknown, r.tokens), took, _clip(r.detail)))
    ran = {r.node_id for r in book.rows}
    out += [(nid, "", "-", "", "", "", "", "") for nid in graph.topo_order if nid not in ran]
    return out


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


def _tone(verdict: str) -> Tone | None:
    if verdict.startswith("PASS"):
        return "good"
    if verdict.startswith("FAIL"):
        return "bad"
    return "wait" if verdict in ("AWAITING", "PENDING", "LOOPING") else None


def _table(
    columns: tuple[str, ...], body: list[tuple[str, ...]], paint: Paint = PLAIN
) -> list[str]:
    widths = [max(len(r[i]) for r in [columns, *body]) for i in range(len(columns))]
    at = columns.index("VERDICT")

    def line(r: tuple[str, ...], head: bool = False) -> str:
        cells = [c.ljust(w) for c, w in zip(r, widths, strict=True)]
        tone = None if head else _tone(r[at])
        if tone is not None:  # padded first: the colour codes take no column
            cells[at] = paint(r[at], tone) + cells[at][len(r[at]) :]
        return "  ".join(cells).rstrip()

    rule = "-" * len(line(tuple("x" * w for w in widths), head=True))
    return [line(columns, head=True), rule, *(line(r) for r in body), rule]


def spent_unknown(usd: float, tokens: int) -> str:
    """A total some of whose executions had no known cost: the tokens they used, and the
    subtotal of those that had one."""
    used = f"{tokens} tokens unpriced; " if tokens else ""
    return f"unknown ({used}known subtotal ${usd:.4f})"


def render(
    graph: Graph,
    state: State,
    events: Iterable[Event],
    *,
    by_node: bool = False,
    paint: Paint = PLAIN,
) -> str:
    """The ledger table and its totals line: every execution's row, or one row per node.

    The total is the sum of the execution rows, which equals the sum of the per-node costs in
    state.json (each event's cost lands in exactly one row and one record). The per-node view
    reads state.json alone, so its cost follows the state, not the length of the history.
    ``paint`` colours the verdicts (a terminal's; the default paints nothing).
    """
    rejected = sum(1 for g in state["gates"].values() if g.get("decision") == "reject")
    if by_node:
        records = state["nodes"].values()
        table = _table(COLUMNS, rows(graph, state), paint)
        head = f"Run {state['run_id']} — {len(graph.nodes)} node(s)"
        usd, unknown = state["cost_usd"], any(r.get("cost_unknown") for r in records)
        retries = sum(int(r.get("retries", 0)) for r in records)
        rounds = int(state.get("rounds", state["hops"]))
        anomalies = 0
    else:
        book = ledger(events, limits(graph))
        table = _table(EXECUTION_COLUMNS, execution_rows(graph, book), paint)
        head = f"Run {state['run_id']} — {len(graph.nodes)} node(s), {len(book.rows)} execution(s)"
        usd, unknown = book.total_usd, book.cost_unknown
        retries, rounds = book.retries, book.feedback_rounds
        tokens, anomalies = book.tokens, book.anomalies
    total = f"${usd:.4f}"
    if unknown:
        total = spent_unknown(usd, tokens if not by_node else 0)
    elif not by_node and anomalies:
        total += f" (at least: {anomalies} execution(s) with a cost anomaly, recorded as $0)"
    if state.get("rehearsal"):
        total += (
            " (rehearsed: the stub model's usage, priced by the claude CLI or by the graph's"
            " prices for codex; nothing spent)"
        )
    totals = (
        f"TOTAL COST: {total}   retries: {retries}   "
        f"feedback rounds: {rounds}   send-backs: {rejected}"
    )
    return "\n".join([head, *table, totals])
