"""Scheduling decisions: node status, the ready set, loop rounds and feedback — pure functions."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from omg.model import EXHAUSTED_GATE_SUFFIX, JUDGMENT_CAUSES, Cause, Graph

Status = Literal["passed", "failed", "pending", "awaiting"]
Records = Mapping[str, Mapping[str, Any]]


def loop_round(graph: Graph, records: Records, declarer: str) -> int:
    """The round a loop is in: the declarer's recorded round (0 before any arc fired)."""
    rec = records.get(declarer)
    return int(rec.get("round", 0)) if rec else 0


def current_round(graph: Graph, records: Records, node_id: str) -> int:
    """The round an execution of ``node_id`` launched now belongs to."""
    owner = graph.body_owner.get(node_id)
    return 0 if owner is None else loop_round(graph, records, owner)


def statuses(graph: Graph, records: Records) -> dict[str, Status]:
    """Each node's status; a body record from an older round than its loop's is superseded."""
    out: dict[str, Status] = {}
    for nid in graph.ids:
        rec = records.get(nid)
        if rec is None:
            out[nid] = "pending"
            continue
        owner = graph.body_owner.get(nid)
        if owner is not None and owner != nid and rec.get("round", 0) < loop_round(graph, records, owner):
            out[nid] = "pending"
        elif rec.get("awaiting"):
            out[nid] = "awaiting"
        elif rec["verdict"] == "PASS":
            out[nid] = "passed"
        elif rec["verdict"] == "FAIL":
            out[nid] = "failed"
        else:
            out[nid] = "pending"
    return out


def pruned(graph: Graph, status: Mapping[str, Status]) -> frozenset[str]:
    """Nodes that can never run: descendants of a failed node."""
    out: set[str] = set()
    for nid, s in status.items():
        if s == "failed":
            out |= graph.descendants(nid)
    return frozenset(out)


def ready(
    graph: Graph,
    status: Mapping[str, Status],
    running: Collection[str],
) -> list[str]:
    """Pending nodes whose parents all passed, not running, in topological order (ties: declared)."""
    out = [
        nid
        for nid in graph.topo_order
        if status[nid] == "pending"
        and nid not in running
        and all(status.get(p) == "passed" for p in graph.by_id[nid].depends_on)
    ]
    return out


def unfinished(graph: Graph, status: Mapping[str, Status]) -> list[str]:
    """Nodes that are neither passed nor failed nor pruned: work a later leg could still do."""
    gone = pruned(graph, status)
    return [n for n in graph.ids if status[n] in ("pending", "awaiting") and n not in gone]


@dataclass(frozen=True)
class FeedbackDecision:
    """What a declarer's final-for-this-execution failure does to its loop."""

    action: Literal["fire", "exhausted", "hop_cap", "none"]
    round: int = 0  # the round now beginning (fire) or spent (exhausted)
    detail: str = ""
    gate: str | None = None  # the implicit gate an exhausted loop escalates to


def judge_feedback(
    graph: Graph, records: Records, node_id: str, cause: Cause, judged: bool, hops: int
) -> FeedbackDecision:
    """Whether a failure fires the node's arc (ADR 0010): judgment causes only, bounded twice."""
    fb = graph.node(node_id).feedback
    if fb is None or not judged or cause not in JUDGMENT_CAUSES:
        return FeedbackDecision("none")
    spent = loop_round(graph, records, node_id)
    arc = f"{fb.rerun} → {node_id}"
    if spent >= fb.max:
        gate = node_id + EXHAUSTED_GATE_SUFFIX if fb.on_exhausted == "gate" else None
        detail = f"feedback exhausted after {spent} round(s) of {arc}: {cause}"
        return FeedbackDecision("exhausted", spent, detail, gate)
    if hops >= graph.max_hops:
        detail = (
            f"hop cap reached: the run already re-entered feedback loops {hops} time(s) "
            f"(max_hops: {graph.max_hops}); {arc} does not fire again: {cause} — raise max_hops "
            "in the graph if the loops are converging, or fix what keeps them looping"
        )
        return FeedbackDecision("hop_cap", spent, detail)
    k = spent + 1
    return FeedbackDecision("fire", k, f"feedback round {k}/{fb.max}: re-running {arc}")
