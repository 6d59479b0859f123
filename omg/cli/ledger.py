"""The ledger table: one row per execution (or, ``--by-node``, per node), and the totals line."""

from __future__ import annotations

from collections.abc import Iterable

from omg.cli.terminal import PLAIN, Paint, Tone
from omg.cli.views import View, per_node
from omg.graph.model import Graph
from omg.ledgerrows import (
    COLUMNS,
    EXECUTION_COLUMNS,
    execution_rows,
    limits,
    node_rows,
    spent_unknown,
)
from omg.state import Event, State
from omg.state.ledger import Ledger, ledger


def _tone(verdict: str) -> Tone | None:
    if verdict.startswith("PASS"):
        return "good"
    if verdict.startswith("FAIL"):
        return "bad"
    return "wait" if verdict in ("AWAITING", "PENDING", "LOOPING") else None


def _table(
    columns: tuple[str, ...], body: list[tuple[str, ...]], paint: Paint = PLAIN
) -> list[str]:
    widths = [max(map(len, column)) for column in zip(columns, *body, strict=True)]
    at = columns.index("VERDICT")

    def line(r: tuple[str, ...], head: bool = False) -> str:
        if head or not paint.on:  # (a run's thousands of rows: padded at C speed)
            return "  ".join(map(str.ljust, r, widths)).rstrip()
        cells = [c.ljust(w) for c, w in zip(r, widths, strict=True)]
        tone = _tone(r[at])
        if tone is not None:  # padded first: the colour codes take no column
            cells[at] = paint(r[at], tone) + cells[at][len(r[at]) :]
        return "  ".join(cells).rstrip()

    rule = "-" * len(line(tuple("x" * w for w in widths), head=True))
    return [line(columns, head=True), rule, *map(line, body), rule]


def render(
    graph: Graph,
    state: State,
    events: Iterable[Event],
    *,
    asked: View = "execution",
    paint: Paint = PLAIN,
    book: Ledger | None = None,
    remote: str | None = None,
) -> str:
    """The ledger table and its totals line: every execution's row, or one row per node.

    The total is the sum of the execution rows, which equals the sum of the per-node costs in
    state.json (each event's cost lands in exactly one row and one record). The per-node view
    reads state.json alone, so its cost follows the state, not the length of the history; a
    long run's (``per_node``) says how to list every execution.
    ``paint`` colours the verdicts (a terminal's; the default paints nothing). ``book``: the
    execution rows already folded (``state.kept``), in place of ``events``. ``remote``: the
    run as fetched from there (`status --fetch`), which the long run's hint names.
    """
    rejected = sum(1 for g in state["gates"].values() if g.get("decision") == "reject")
    by_node = per_node(state, asked)
    if by_node:
        records = state["nodes"].values()
        table = _table(COLUMNS, node_rows(graph, state), paint)
        head = f"Run {state['run_id']} — {len(graph.nodes)} node(s)"
        if asked == "auto":
            head += (
                f", {state['seq']:,} events: one row per node "
                f"(`omg status {state['run_id']}{f' --fetch {remote}' if remote else ''} "
                "--executions` lists every execution)"
            )
        usd, unknown = state["cost_usd"], any(r.get("cost_unknown") for r in records)
        retries = sum(int(r.get("retries", 0)) for r in records)
        rounds = int(state.get("rounds", state["hops"]))
        anomalies = 0
    else:
        book = book if book is not None else ledger(events, limits(graph))
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
