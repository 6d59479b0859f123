"""The machine-readable forms (``--format json``): `omg status`'s documents and the outcome line
`omg run` / `omg resume` end with, as ``schemas/status.schema.json`` describes them. Fields are
only ever added within a ``schema`` version; a field changing meaning bumps it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from omg.cli.next import steps
from omg.errors import Hint
from omg.graph.model import Graph
from omg.ledgerrows import limits, verdict_cell
from omg.records import NO_RECORD, NodeRecord
from omg.state import Event, State
from omg.state.ledger import Ledger, ledger

SCHEMA = 1
Doc = dict[str, Any]


def dumps(doc: Doc) -> str:
    """One line of JSON (UTF-8 text as it is; `jq` reads it)."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def status_of(state: State, derived: str) -> str:
    """The closed status of a run: the record's, or ``abandoned`` for an open leg no process
    holds (``derived`` is how `omg status` words it)."""
    if derived == "abandoned":
        return "abandoned"
    legs = state["legs"]
    if legs and legs[-1]["outcome"] is None:
        return "running"
    return str(state["status"])


def _next(hint: Hint | None) -> Doc:
    if hint is None:
        return {"step": "none", "commands": []}
    _, commands = steps(hint)
    return {"step": hint.step, "commands": commands}


def summary(rid: str, state: State, derived: str, **where: str) -> Doc:
    """One run of a listing (``where``: ``head``, the commit read, for a remote's run)."""
    legs = state["legs"]
    return {
        "run_id": rid,
        "graph": str(state["graph"].get("name", "")),
        "status": status_of(state, derived),
        "derived": derived,
        "legs": len(legs),
        "cost_usd": float(state["cost_usd"]),
        "cost_unknown": any(bool(r.get("cost_unknown")) for r in state["nodes"].values()),
        "paused_at": state["paused_at"] or None,
        "reason": legs[-1].get("reason") if legs else None,
        "error": None,
        **where,
    }


def unreadable(rid: str, status: str, why: str, **where: str) -> Doc:
    """A listing's entry for a run that cannot be read (damaged, never started, not a run)."""
    return {
        "run_id": rid,
        "graph": None,
        "status": status,
        "derived": why,
        "legs": None,
        "cost_usd": None,
        "cost_unknown": False,
        "paused_at": None,
        "reason": None,
        "error": why,
        **where,
    }


def listing(runs: Sequence[Doc], *, runs_dir: str | None = None, remote: str | None = None) -> Doc:
    return {"schema": SCHEMA, "kind": "runs", "runs_dir": runs_dir, "remote": remote,
            "runs": list(runs)}  # fmt: skip


def run(
    graph: Graph,
    state: State,
    events: Iterable[Event],
    derived: str,
    hint: Hint | None,
    book: Ledger | None = None,
    **where: str,
) -> Doc:
    """One run: its summary, what to do next, one entry per node and one per execution
    (``book``: the execution rows already folded, ``state.kept``, in place of ``events``)."""
    book = book if book is not None else ledger(events, limits(graph))
    nodes = []
    for nid in graph.topo_order:
        found = state["nodes"].get(nid)
        rec: NodeRecord = found if found is not None else NO_RECORD
        verdict = None
        if found is not None:
            verdict = verdict_cell(found).split(" ")[0]
        nodes.append(
            {
                "id": nid,
                "verdict": verdict,
                "provenance": rec.get("provenance") or None,
                "cause": rec.get("cause") or None,
                "round": int(rec.get("round", 0)),
                "attempts": int(rec.get("attempts", 0)),
                "cost_usd": float(rec.get("cost_usd", 0.0)),
                "cost_unknown": bool(rec.get("cost_unknown")),
                "duration_s": rec.get("duration_s"),
                "detail": str(rec.get("detail") or ""),
            }
        )
    executions = [
        {
            "node_id": r.node_id,
            "leg": r.leg,
            "round": r.round,
            "attempts": r.attempts,
            "verdict": r.verdict,
            "provenance": r.provenance,
            "cause": r.cause,
            "cost_usd": r.cost_usd,
            "cost_unknown": r.cost_unknown,
            "tokens": r.tokens,
            "duration_s": r.duration_s,
            "detail": r.detail,
        }
        for r in book.rows
    ]
    return {
        "schema": SCHEMA,
        "kind": "run",
        **summary(state["run_id"], state, derived, **where),
        "next": _next(hint),
        "nodes": nodes,
        "executions": executions,
    }


def outcome(
    state: State,
    result_outcome: str | None,
    reason: str | None,
    hint: Hint | None,
    exit_code: int,
    *,
    next_step: str | None = None,
) -> Doc:
    """The line `omg run` / `omg resume --format json` ends with: how the leg ended."""
    nxt = _next(hint)
    return {
        "schema": SCHEMA,
        "kind": "outcome",
        "run_id": state["run_id"],
        "status": status_of(state, ""),
        "outcome": result_outcome,
        "reason": reason,
        "next": next_step or nxt["step"],
        "commands": nxt["commands"],
        "gate": state["paused_at"] or None,
        "cost_usd": float(state["cost_usd"]),
        "exit_code": exit_code,
        "error": None,
    }


def refusal(run_id: str | None, exit_code: int, error: str) -> Doc:
    """The outcome line of a run or resume that was refused before a leg ran."""
    return {
        "schema": SCHEMA,
        "kind": "outcome",
        "run_id": run_id,
        "status": "refused",
        "outcome": None,
        "reason": None,
        "next": "none",
        "commands": [],
        "gate": None,
        "cost_usd": None,
        "exit_code": exit_code,
        "error": error,
    }
