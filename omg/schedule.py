"""Scheduling decisions: node status, the ready set, loop rounds and feedback — pure functions."""

from __future__ import annotations

import heapq
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal, cast

from omg.graph.model import Graph, Node
from omg.kinds import EXHAUSTED_GATE_SUFFIX, JUDGMENT_CAUSES, Cause, Outcome, StopReason
from omg.records import GateRecord, NodeRecord

Status = Literal["passed", "failed", "pending", "awaiting"]
Records = Mapping[str, NodeRecord]


def loop_round(graph: Graph, records: Records, declarer: str) -> int:
    """The round a loop is in: the declarer's recorded round (0 before any arc fired)."""
    rec = records.get(declarer)
    return int(rec.get("round", 0)) if rec else 0


def current_round(graph: Graph, records: Records, node_id: str) -> int:
    """The round an execution of ``node_id`` launched now belongs to."""
    owner = graph.body_owner.get(node_id)
    return 0 if owner is None else loop_round(graph, records, owner)


def status_of(graph: Graph, records: Records, nid: str) -> Status:
    """One node's status; a body record from an older round than its loop's is superseded."""
    rec = records.get(nid)
    if rec is None:
        return "pending"
    owner = graph.body_owner.get(nid)
    if owner not in (None, nid) and rec.get("round", 0) < loop_round(graph, records, str(owner)):
        return "pending"
    if rec.get("awaiting"):
        return "awaiting"
    if rec["verdict"] == "PASS":
        return "passed"
    if rec["verdict"] == "FAIL":
        return "failed"
    return "pending"


def statuses(graph: Graph, records: Records) -> dict[str, Status]:
    """Each node's status (see ``status_of``)."""
    return {nid: status_of(graph, records, nid) for nid in graph.ids}


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
    """Pending nodes whose parents all passed, not running, topologically (ties: declared)."""
    out = [
        nid
        for nid in graph.topo_order
        if status[nid] == "pending"
        and nid not in running
        and all(status.get(p) == "passed" for p in graph.by_id[nid].depends_on)
    ]
    return out


def affected_by(graph: Graph, event: Mapping[str, object]) -> frozenset[str] | None:
    """The nodes whose status ``event`` can change; None when it may change any of them.

    A status reads the node's own record and its loop declarer's round, so a node event
    touches that node and, when it is a declarer, the body its round re-arms or settles.
    """
    kind = event["event"]
    if kind == "node_started":
        return frozenset()
    ids = [str(event[k]) for k in ("node_id", "declarer") if k in event]
    if kind not in ("node_retried", "node_passed", "node_failed", "gate_paused") or not ids:
        return None
    out = {nid for nid in ids if nid in graph.by_id}
    for nid in ids:
        out.update(graph.arcs.get(nid, ()))
    return frozenset(out)


class Frontier:
    """``statuses`` and ``ready`` kept up to date event by event.

    Recomputing both for every launch costs O(graph) per node, O(n²) per leg; the frontier
    re-derives only the statuses an event can change (``affected_by``) and re-judges
    readiness only for those nodes and their children. At every point its answers equal
    ``statuses(graph, records)`` and ``ready(graph, status, running)``.
    """

    def __init__(self, graph: Graph, records: Records) -> None:
        self.graph = graph
        self._pos = {nid: i for i, nid in enumerate(graph.topo_order)}
        self.reset(records)

    def reset(self, records: Records) -> None:
        self.status = statuses(self.graph, records)
        self._by: dict[str, set[str]] = {}
        for nid, st in self.status.items():
            self._by.setdefault(st, set()).add(nid)
        self._ready = {nid for nid in self.graph.ids if self._is_ready(nid)}
        # the ready set in graph order: a heap with lazy removal (an entry whose node left
        # the ready set is dropped when it surfaces), so the next launch costs O(log n)
        self._heap = [(self._pos[nid], nid) for nid in self._ready]
        heapq.heapify(self._heap)
        self._queued = set(self._ready)

    def _is_ready(self, nid: str) -> bool:
        status = self.status
        return status[nid] == "pending" and all(
            status.get(p) == "passed" for p in self.graph.by_id[nid].depends_on
        )

    def update(self, records: Records, touched: Collection[str] | None) -> None:
        """Fold in the records ``touched`` nodes now have (None: anything may have changed)."""
        if touched is None:
            self.reset(records)
            return
        changed = []
        for nid in touched:
            new = status_of(self.graph, records, nid)
            old = self.status[nid]
            if new != old:
                self._by[old].discard(nid)
                self._by.setdefault(new, set()).add(nid)
                self.status[nid] = new
                changed.append(nid)
        children = self.graph.children
        for nid in [*changed, *(c for n in changed for c in children[n])]:
            if self._is_ready(nid):
                self._ready.add(nid)
                if nid not in self._queued:
                    heapq.heappush(self._heap, (self._pos[nid], nid))
                    self._queued.add(nid)
            else:
                self._ready.discard(nid)

    def having(self, status: Status) -> set[str]:
        """The nodes with ``status`` (do not modify)."""
        return self._by.get(status, set())

    def ready(self, running: Collection[str]) -> list[str]:
        """Same as ``ready(graph, self.status, running)``."""
        return sorted((n for n in self._ready if n not in running), key=self._pos.__getitem__)

    def first(self, running: Collection[str]) -> str | None:
        """``ready(running)[0]`` (None when empty), in O(log n) plus the running nodes."""
        heap, held = self._heap, []
        found = None
        while heap:
            nid = heap[0][1]
            if nid not in self._ready:
                heapq.heappop(heap)
                self._queued.discard(nid)
            elif nid in running:
                held.append(heapq.heappop(heap))
            else:
                found = nid
                break
        for item in held:
            heapq.heappush(heap, item)
        return found


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
    """Whether a failure fires the node's arc: judgment causes only, bounded twice."""
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
            f"(max_hops: {graph.max_hops}); {arc} does not fire again: {cause} — a human decision "
            "resets the count (`omg resume --retry-failed` buys the loops a fresh max_hops); a "
            "run keeps the graph it started with, so a higher max_hops needs a new run from an "
            "edited graph"
        )
        return FeedbackDecision("hop_cap", spent, detail)
    k = spent + 1
    return FeedbackDecision("fire", k, f"feedback round {k}/{fb.max}: re-running {arc}")


@dataclass(frozen=True)
class Rearm:
    """What ``--retry-failed`` makes pending again, recorded on that leg's ``run_started``."""

    nodes: tuple[str, ...]  # FAIL records (not rejected gates) and the bodies of their loops
    gates: tuple[str, ...]  # implicit gates whose decision the fresh rounds forget


def rearm(graph: Graph, records: Records, gates: Mapping[str, GateRecord]) -> Rearm:
    """The ``--retry-failed`` decision: failed records and exhausted loops, re-armed whole."""
    rejected = {g for g, d in gates.items() if d.get("decision") == "reject"}
    cleared = {
        nid
        for nid, rec in records.items()
        if (rec["verdict"] == "FAIL" and nid not in rejected) or rec.get("awaiting")
    }
    forget = []
    for nid in sorted(cleared, key=graph.index.__getitem__):
        rec = records[nid]
        if nid in graph.arcs and (rec.get("round", 0) > 0 or rec.get("awaiting")):
            cleared.update(graph.arcs[nid])
            # Fresh rounds, fresh exhaustion: the implicit gate forgets its decision (awaiting or
            # rejected) so a new one is asked — and an old one is never taken for it.
            forget.append(str(rec.get("awaiting") or nid + EXHAUSTED_GATE_SUFFIX))
    return Rearm(tuple(n for n in graph.ids if n in cleared), tuple(forget))


@dataclass(frozen=True)
class LegResult:
    """How a leg ended: its outcome, why it stopped there, the gate it paused at."""

    outcome: Outcome
    reason: StopReason | None = None
    paused_at: str | None = None
    detail: str = ""


def failed_for_good(graph: Graph, status: Mapping[str, Status]) -> list[str]:
    """The failed nodes when they end the run (halt, or nothing else left to run), else []."""
    failed = [n for n, s in status.items() if s == "failed"]
    if failed and (graph.on_fail == "halt" or not unfinished(graph, status)):
        return failed
    return []


def ending(
    graph: Graph, status: Mapping[str, Status], stop: str | None, paused_at: str | None
) -> LegResult:
    """The outcome rule: what a leg that stopped (or ran dry) at ``status`` ended as."""
    failed = [n for n, s in status.items() if s == "failed"]
    left = unfinished(graph, status)
    if stop == "gate" and (not failed or graph.on_fail == "continue"):
        return LegResult("paused", "gate", paused_at)
    if failed_for_good(graph, status):
        return LegResult("failed", "failed", detail="failed: " + ", ".join(failed))
    if left:
        reason: StopReason = "unfinished"
        if stop in ("leg_budget", "limit", "spend_cap"):
            reason = cast(StopReason, stop)  # the names a Stop shares with StopReason
        return LegResult("paused", reason, detail="unfinished: " + ", ".join(left))
    return LegResult("passed")


RetryAction = Literal["final", "retry", "defer"]


def next_attempt(
    node: Node, attempt: int, passed: bool, cause: Cause | None, time_left: float | None
) -> tuple[RetryAction, float]:
    """After attempt ``attempt``: stop here, retry after a delay, or defer to the next leg.

    A retry the leg's time budget cannot hold (its backoff plus the node's timeout) is deferred:
    the next leg runs the node, so a leg never overruns ``--max-minutes`` on purpose.
    """
    if passed or cause not in node.retry.on or attempt >= 1 + max(node.retry.max, 0):
        return "final", 0.0
    delay = node.retry.backoff.delay_s(attempt) if node.retry.backoff is not None else 0.0
    if time_left is not None and delay + node.timeout_s > time_left:
        return "defer", delay
    return "retry", delay
