"""The leg loop: launch ready nodes, settle each result, stop where the schedule says."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, cast

from omg import schedule
from omg.graph.model import Graph, Node
from omg.kinds import Cause
from omg.leg import stall
from omg.leg import wait as waits
from omg.leg.attempt import Context, Result, execute
from omg.leg.caps import CapGuard, SpendCaps
from omg.leg.structured import recorded
from omg.records import CappedRecord, WaitRecord
from omg.schedule import LegResult
from omg.state import NO_RECORD, State
from omg.state.artifacts import digest
from omg.state.events import Event, EventFields

#: Why the loop stopped launching: a halting failure, a gate, the leg's budget, a provider's
#: limit, or a spend cap.
Stop = Literal["halt", "gate", "leg_budget", "limit", "spend_cap"]
FINDINGS_LIMIT = 4000  # characters of a declarer's last findings shown on its exhausted gate


@dataclass(frozen=True)
class LegOptions:
    """One leg's limits, built once from the command line (or a CI job's arguments)."""

    #: Nodes at once; None: the graph's ``concurrency``.
    concurrency: int | None = None
    max_minutes: float | None = None
    max_nodes: int | None = None
    #: A fan-out leg: only these nodes launch (a matrix job's entry; none in a fold); the other
    #: ready nodes, and the nodes a fired arc re-arms, are left for the next plan.
    only: frozenset[str] | None = None
    #: Whether the leg pauses at a ready gate or an exhausted loop once nothing else runs. A
    #: matrix job does not (its fold decides, seeing every entry); any other leg does.
    pause_idle: bool = True
    #: Seconds from a limit's pause to the earliest retry (None: ``leg.wait.POLL_S`` by kind).
    limit_wait_s: float | None = None
    #: Spend caps given to this leg (the action's inputs); None: the graph's.
    caps: SpendCaps | None = None

    def workers(self, graph: Graph) -> int:
        """How many nodes this leg runs at once."""
        return max(1, self.concurrency or graph.concurrency)


#: Called after each settled node (PASS, FAIL, or a feedback marker): the git commit hook.
SettledHook = Callable[[str, str, int], None]


class Leg:
    """Runs the ready set to exhaustion (or a stop) and records every step through the recorder."""

    def __init__(
        self,
        ctx: Context,
        opts: LegOptions,
        on_settled: SettledHook | None = None,
        guard: CapGuard | None = None,
    ) -> None:
        self.ctx = ctx
        self.guard = guard  # the spend caps beyond this run (per pull request, per day)
        self.opts = opts
        self.workers = opts.workers(ctx.graph)
        self.on_settled = on_settled
        self.launched = 0
        self.stop: Stop | None = None
        self.paused_at: str | None = None
        self.wait: WaitRecord | None = None  # the provider's limit this leg paused for
        self.capped: CappedRecord | None = None  # the spend cap this leg paused at
        self._frontier: schedule.Frontier | None = None
        self._touched: set[str] | None = set()  # statuses events changed since the last launch
        ctx.recorder.listen(self._on_event)

    @property
    def graph(self) -> Graph:
        return self.ctx.graph

    def run(self) -> LegResult:
        running: dict[Future[Result], str] = {}
        rec = self.ctx.recorder
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            while True:
                if self.stop is None:
                    self._launch(pool, running)
                if not running:
                    break
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for fut in sorted(done, key=lambda f: self.graph.index[running[f]]):
                    running.pop(fut)
                    res = fut.result()
                    self._settle(res)
                    self._settle_spend(res)
        status = rec.read(lambda st: schedule.statuses(self.graph, st["nodes"]))
        return self._finish(status)

    # -- launching --------------------------------------------------------------
    def _on_event(self, ev: Event, state: State) -> None:
        """Recorder listener (called under its lock): note whose status the event may change."""
        if self._touched is not None:
            touched = schedule.affected_by(self.graph, ev)
            if touched is None:
                self._touched = None
            else:
                self._touched |= touched

    def _statuses(self) -> schedule.Frontier:
        """Node statuses and the ready set, re-derived only where events changed them."""

        def refresh(st: State) -> schedule.Frontier:
            if self._frontier is None:
                self._frontier = schedule.Frontier(self.graph, st["nodes"])
            elif self._touched is None or self._touched:
                self._frontier.update(st["nodes"], self._touched)
            self._touched = set()
            return self._frontier

        frontier: schedule.Frontier = self.ctx.recorder.read(refresh)
        return frontier

    def _launch(self, pool: ThreadPoolExecutor, running: dict[Future[Result], str]) -> None:
        rec = self.ctx.recorder
        while len(running) < self.workers and self.stop is None:
            nodes = rec.state["nodes"]
            frontier = self._statuses()
            if self.graph.on_fail == "halt" and frontier.having("failed"):
                self.stop = "halt"
                return
            busy = set(running.values())
            if self.opts.only is not None:
                candidates = self._only(frontier.ready(busy), running)
            else:
                first = frontier.first(busy)
                candidates = [] if first is None else [first]
            if not candidates:
                awaiting = frontier.having("awaiting")
                if awaiting and not running and self.opts.pause_idle:
                    declarer = min(awaiting, key=self.graph.index.__getitem__)
                    gate = rec.state["nodes"][declarer].get("awaiting")
                    self._pause_at(str(gate), declarer=declarer)
                return
            node = self.graph.node(candidates[0])
            if node.kind == "gate":
                self._pause_at(node.id)
                return
            if not self._leg_budget_allows(node):
                self.stop = "leg_budget"
                return
            if self._graph_budget_spent(node):
                continue
            if self._spend_capped(node):
                return
            round_ = schedule.current_round(self.graph, nodes, node.id)
            self.launched += 1
            started = threading.Event()
            running[pool.submit(self._execute, node, round_, started)] = node.id
            started.wait()  # its node_started is written before the next launch's

    def _only(self, candidates: list[str], running: dict[Future[Result], str]) -> list[str]:
        """A fan-out leg's candidates: its own nodes; once none run, a gate it may pause at."""
        only = self.opts.only or frozenset()
        mine = [c for c in candidates if c in only]
        if mine or running or not self.opts.pause_idle:
            return mine
        return [c for c in candidates if self.graph.node(c).kind == "gate"]

    def _execute(self, node: Node, round_: int, started: threading.Event) -> Result:
        try:
            return execute(self.ctx, node, round_, on_started=started.set)
        finally:
            started.set()  # also when it raised before its node_started

    def _pause_at(self, gate: str, declarer: str | None = None, detail: str | None = None) -> None:
        desc = ""
        if declarer is None:
            desc = self.graph.node(gate).description
        else:  # an exhausted loop: the human judges the last findings, so the gate shows them
            if detail is None:
                detail = self.ctx.recorder.read(lambda st: st["nodes"][declarer].get("detail"))
            path = self.ctx.rundir.feedback(declarer)
            findings = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
            if len(findings) > FINDINGS_LIMIT:
                findings = "…" + findings[-FINDINGS_LIMIT:]
            desc = (
                f"{detail or f'the feedback loop of {declarer} is exhausted'}\n"
                f"Approve to accept the work as it stands, reject to fail {declarer}, or "
                f"resume with --retry-failed for a fresh set of rounds (--guidance TEXT, or "
                f"`/omg retry TEXT` on a pull request, gives the rounds your words).\n"
                f"Last findings of {declarer}:\n{findings.strip() or '(none recorded)'}"
            )
        self.ctx.recorder.emit(
            "gate_paused",
            node_id=gate,
            declarer=declarer,
            description=desc or None,
            detail=detail or None,
        )
        self.stop = "gate"
        self.paused_at = gate

    def _leg_budget_allows(self, node: Node) -> bool:
        if self.opts.max_nodes is not None and self.launched >= self.opts.max_nodes:
            return False
        left = self.ctx.deadline.left()
        return left is None or node.timeout_s <= left

    def _graph_budget_spent(self, node: Node) -> bool:
        cap = self.graph.budget_usd
        if cap is None:
            return False
        spent = float(self.ctx.recorder.read(lambda st: st["cost_usd"]))
        if spent < cap:
            return False
        self.ctx.recorder.emit(
            "node_failed",
            node_id=node.id,
            verdict="FAIL",
            cause="budget_exceeded",
            judged=False,
            round=schedule.current_round(self.graph, self.ctx.recorder.state["nodes"], node.id)
            or None,
            detail=f"graph budget_usd ${cap:.2f} is spent (${spent:.4f} so far); "
            "the node was not started — raise budget_usd in the graph to continue",
        )
        self._hook(node.id, "FAIL", 0)
        return True

    def _spend_capped(self, node: Node) -> bool:
        """Reserve an agent execution against the spend caps; True when a cap stops it."""
        if self.guard is None or node.kind != "agent":
            return False
        capped = self.guard.admit(node.id, node.budget_usd or 0.0)
        if capped is None:
            return False
        self.capped = capped
        self.stop = "spend_cap"
        return True

    def _settle_spend(self, res: Result) -> None:
        """An agent execution's reservation settled at what it cost, every attempt summed."""
        if self.guard is None or self.graph.node(res.node_id).kind != "agent":
            return
        self.guard.settle(res.node_id, None if res.spend.cost_unknown else res.total_usd)

    # -- settling ---------------------------------------------------------------
    def _settle(self, res: Result) -> None:
        rec = self.ctx.recorder
        rd = self.ctx.rundir
        node = self.graph.node(res.node_id)
        verdict = "PASS" if res.passed else "FAIL"
        # What every record of this execution carries; a node_retried leaves out the retries.
        spent: EventFields = {
            "node_id": res.node_id,
            "round": res.round or None,
            **cast(EventFields, res.spend.fields()),  # SpendFields is EventFields' base
            "permission_denials": list(res.denials) or None,
            "cli_version": res.tool_version or None,
            "api_retries": res.api_retries or None,
            "proxy": res.proxy,
            "session_id": res.session_id,
            "duration_s": round(res.duration_s, 3),
            "output": recorded(res.structured),  # a structured reply, as validated
        }
        spent.update(self.ctx.workspace.settle(node, verdict, res.round))
        common = spent.copy()
        common["retries"] = res.retries or None
        if res.passed:
            written = rd.write_payload(rd.artifact(res.node_id), res.reply)
            rd.remove_payload(rd.failed(res.node_id))
            detail = res.detail or (f"feedback round {res.round}" if res.round else "")
            rec.emit(
                "node_passed",
                common,
                verdict="PASS",
                provenance=res.provenance,
                detail=detail or None,
                artifact=digest(written),  # a later leg tells an empty reply from a lost one
            )
            self._hook(res.node_id, "PASS", res.round)
            return
        if res.reply.strip():
            rd.write_payload(rd.failed(res.node_id), res.reply)
        if res.limit is not None:  # not final: the node waits for the limit, unsettled
            rec.emit(
                "node_retried",
                spent,
                reason="limit",
                cause="run_error",
                detail=res.detail,
                limit=res.limit.kind,
                resets=res.limit.resets or None,
            )
            if self.wait is None:
                now = datetime.now(UTC)
                self.wait = waits.record(res.node_id, res.limit, now, self.opts.limit_wait_s)
            if self.stop in (None, "leg_budget"):
                self.stop = "limit"
            self._hook(res.node_id, "", res.round)
            return
        if res.deferred:  # not final: the spend is recorded, the next leg runs the node again
            rec.emit("node_retried", spent, reason="leg_budget", cause=res.cause, detail=res.detail)
            self.stop = "leg_budget"
            self._hook(res.node_id, "", res.round)
            return
        cause = res.cause or "run_error"
        decision = rec.read(
            lambda st: schedule.judge_feedback(
                self.graph, st["nodes"], res.node_id, cause, res.judged, st["hops"]
            )
        )
        final_cause: Cause | None = res.cause
        if decision.action == "fire":
            why, trees = self._stalled(node, res)
            if not why:
                rd.write_payload(rd.feedback(res.node_id), res.payload)
                spent["round"] = decision.round
                if trees:
                    spent["lane_trees"] = trees
                rec.emit(
                    "node_retried",
                    spent,
                    reason="feedback",
                    cause=res.cause,
                    detail=decision.detail,
                )
                self._hook(res.node_id, "", decision.round)
                return
            decision = stall.escalation(node, decision, why, res.payload)
            final_cause = "no_progress"
        detail = res.detail
        if final_cause == "no_progress":  # its detail quotes what repeated already
            rd.write_payload(rd.feedback(res.node_id), res.payload)
            detail = decision.detail
        elif decision.action in ("exhausted", "hop_cap"):
            # The latest verdict always wins: a round a human buys later (--retry-failed) starts
            # from these findings, not from the round before them.
            rd.write_payload(rd.feedback(res.node_id), res.payload)
            detail = (
                f"{decision.detail}: {res.detail}"
                if decision.action == "exhausted"
                else (f"{decision.detail}; {res.detail}")
            )
        if decision.gate is not None:
            rec.emit("node_retried", spent, reason="exhausted", cause=final_cause, detail=detail)
            if self.opts.pause_idle:  # else the loop awaits its gate; the fold pauses there
                self._pause_at(decision.gate, declarer=res.node_id, detail=detail)
            else:
                self._hook(res.node_id, "", res.round)
            return
        rec.emit(
            "node_failed",
            common,
            verdict="FAIL",
            cause=final_cause,
            judged=res.judged,
            detail=detail,
        )
        self._hook(res.node_id, "FAIL", res.round)

    def _stalled(self, node: Node, res: Result) -> tuple[str, dict[str, str]]:
        """Why the round that just failed made no progress ("" if it did), and the lane trees
        of its re-run path now (what the next round is compared with)."""
        fb = node.feedback
        body = [self.graph.node(n) for n in self.graph.arcs.get(node.id, ())]
        trees = self.ctx.workspace.lane_trees(body)
        if fb is None or not fb.stop_on_no_progress:
            return "", trees
        rec = self.ctx.recorder.read(lambda st: st["nodes"].get(node.id, NO_RECORD))
        if not rec.get("round"):  # the loop's first verdict: no round before it to compare
            return "", trees
        path = self.ctx.rundir.feedback(node.id)
        previous = path.read_text(encoding="utf-8", errors="replace") if path.exists() else None
        return stall.stalled(previous, res.payload, rec.get("lane_trees"), trees), trees

    def _hook(self, node_id: str, verdict: str, round_: int) -> None:
        if self.on_settled is not None:
            self.on_settled(node_id, verdict, round_)

    # -- finishing --------------------------------------------------------------
    def _finish(self, status: dict[str, schedule.Status]) -> LegResult:
        res = schedule.ending(self.graph, status, self.stop, self.paused_at)
        self.ctx.recorder.emit(
            "run_finished",
            outcome=res.outcome,
            reason=res.reason,
            paused_at=res.paused_at,
            detail=res.detail or None,
            wait=self.wait if res.reason == "limit" else None,
            capped=self.capped if res.reason == "spend_cap" else None,
            caps=self.guard.standing() or None if self.guard is not None else None,
        )
        return res
