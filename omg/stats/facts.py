"""One run's facts for the statistics: what it cost, how it ended, how its loops ended, how long
people took at its gates — from its state and the events state.json does not summarise."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from omg.kinds import JUDGMENT_CAUSES
from omg.records import State
from omg.state.events import Event

#: How a run stands: passed, failed, paused at a gate (a person decides), superseded by a newer
#: head, waiting for its next leg (a leg budget, a provider's limit, a spend cap), running.
RunOutcome = Literal["passed", "failed", "paused", "superseded", "waiting", "running"]
OUTCOMES: tuple[RunOutcome, ...] = (
    "passed", "failed", "paused", "superseded", "waiting", "running",
)  # fmt: skip
#: How a feedback loop ended: its reviewer passed (converged), a round changed nothing
#: (no_progress), its rounds or the run's hops ran out (exhausted), or its reviewer failed
#: for a reason no loop fires on — a timeout, an error (broken).
LoopEnding = Literal["converged", "no_progress", "exhausted", "broken"]
ENDINGS: tuple[LoopEnding, ...] = ("converged", "no_progress", "exhausted", "broken")
#: Why an attempt failed, as counted: its cause, or this word when it names none.
UNNAMED = "failed"


class Malformed(ValueError):
    """A record omg could not have written: a field missing or of the wrong type."""


@dataclass(frozen=True)
class Damaged:
    """A run branch whose record could not be read: which run, at which commit, and why."""

    run_id: str
    commit: str
    why: str


@dataclass(frozen=True)
class Loop:
    """One loop's course to its end: its reviewer, the feedback rounds it took, how it ended."""

    declarer: str
    rounds: int
    ending: LoopEnding


@dataclass(frozen=True)
class GateWait:
    """A gate a run paused at: how long until a person decided (None: still undecided)."""

    gate: str
    seconds: float | None
    decision: str  # approve | reject | "" (undecided)


@dataclass(frozen=True)
class Version:
    """A graph as a run snapshotted it: its name, the hash of its file and of every fragment it
    spliced (``resolved_from``) — a changed prompt anywhere is a new version."""

    graph: str
    graph_sha256: str
    fragments: tuple[tuple[str, str], ...]

    @property
    def key(self) -> str:
        """The version's short name: 12 hex digits of the hashes it is made of."""
        text = json.dumps([self.graph, self.graph_sha256, list(self.fragments)])
        return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class RunFacts:
    """What the statistics count of one run."""

    run_id: str
    version: Version
    started: datetime | None  # its first leg's start
    outcome: RunOutcome
    cost_usd: float
    cost_unknown: bool  # an execution's cost is unknown (codex without a price): at least this
    executions: int
    attempts: int
    pull_request: int | None
    rehearsal: bool
    loops: tuple[Loop, ...]
    gates: tuple[GateWait, ...]
    failures: tuple[tuple[str, str], ...]  # (node, cause) of every failed attempt
    api_retries: int
    limit_pauses: int


def version_of(state: State) -> Version:
    """The graph version a run ran: its snapshot's hash and the fragments' hashes."""
    graph = state["graph"]
    name = _text(graph.get("name", ""), "graph.name")
    sha = _text(state["graph_sha256"], "graph_sha256")
    if not sha:  # a graph not read from a file: the snapshot itself is the version
        sha = "snapshot:" + hashlib.sha256(json.dumps(graph, sort_keys=True).encode()).hexdigest()
    spliced = graph.get("resolved_from") or {}
    if not isinstance(spliced, Mapping):
        raise Malformed("graph.resolved_from is not a mapping")
    frags = tuple(
        sorted((_text(k, "fragment"), _text(v, "fragment hash")) for k, v in spliced.items())
    )
    return Version(name, sha, frags)


def outcome_of(state: State) -> RunOutcome:
    """How the run stands by its record (an open leg is running, wherever it runs)."""
    legs = state["legs"]
    status = state["status"]
    if status == "superseded":
        return "superseded"
    if legs and legs[-1]["outcome"] is None:
        return "running"
    if status == "paused":
        return "paused" if state["paused_at"] else "waiting"
    if status in ("passed", "failed"):
        return status  # type: ignore[return-value]
    return "running"


def facts(state: State, events: Sequence[Event]) -> RunFacts:
    """The run's facts: ``state`` as its record folds (state.json caught up with the events past
    it) and ``events``, the whole log, for what the state does not keep."""
    graph = state["graph"]
    declarers = {
        _text(n.get("id"), "node id")
        for n in graph.get("nodes", [])
        if isinstance(n, Mapping) and n.get("feedback")
    }
    scan = _Scan(declarers)
    for ev in events:
        scan.take(ev)
    pr = state.get("pull_request")
    number = pr.get("number") if isinstance(pr, Mapping) else None
    legs = state["legs"]
    cost = _number(state["cost_usd"], "cost_usd")
    return RunFacts(
        run_id=_text(state["run_id"], "run_id"),
        version=version_of(state),
        started=parse_ts(legs[0]["started"]) if legs else None,
        outcome=outcome_of(state),
        cost_usd=cost,
        cost_unknown=any(bool(r.get("cost_unknown")) for r in state["nodes"].values()),
        executions=scan.executions,
        attempts=sum(
            int(_number(r.get("attempts", 0), "attempts")) for r in state["nodes"].values()
        ),
        pull_request=number if isinstance(number, int) and not isinstance(number, bool) else None,
        rehearsal=bool(state.get("rehearsal")),
        loops=tuple(scan.loops),
        gates=tuple(scan.gate_waits(state["paused_at"])),
        failures=tuple(scan.failures),
        api_retries=scan.api_retries,
        limit_pauses=scan.limit_pauses,
    )


class _Scan:
    """One pass over the events for what state.json does not summarise."""

    def __init__(self, declarers: Iterable[str]) -> None:
        self.declarers = set(declarers)
        self.executions = 0
        self.api_retries = 0
        self.limit_pauses = 0
        self.loops: list[Loop] = []
        self.failures: list[tuple[str, str]] = []
        self.rounds: dict[str, int] = {}  # declarer → feedback rounds of the loop under way
        self.paused: dict[str, datetime] = {}  # gate → when it paused, until decided
        self.waits: list[GateWait] = []

    def take(self, ev: Event) -> None:
        kind = ev["event"]
        node = _text(ev.get("node_id", ""), "node_id")
        if kind == "node_started":
            self.executions += 1
            return
        if kind == "run_started":  # --retry-failed: a re-armed loop's gate is asked afresh
            for gate in ev.get("forget_gates") or ():
                self.paused.pop(gate, None)
            return
        retries = ev.get("api_retries")
        if retries is not None:
            self.api_retries += max(0, int(_number(retries, "api_retries")))
        reason = ev.get("reason")
        if kind == "node_retried":
            self._retried(node, reason, ev)
        elif kind == "node_failed":
            self.failures.append((node, _cause(ev)))
            if node in self.declarers:
                self._ended(node, _failed_loop(ev))
        elif kind == "node_passed" and node in self.declarers:
            if ev.get("provenance") != "approved":  # an exhausted loop approved ended already
                self._ended(node, "converged")
        elif kind == "gate_paused":
            self.paused.setdefault(node, _ts(ev))
        elif kind in ("gate_approved", "gate_rejected"):
            since = self.paused.pop(node, None)
            if since is not None:
                seconds = max(0.0, (_ts(ev) - since).total_seconds())
                decision = "approve" if kind == "gate_approved" else "reject"
                self.waits.append(GateWait(node, seconds, decision))

    def _retried(self, node: str, reason: object, ev: Event) -> None:
        if reason == "limit":
            self.limit_pauses += 1
        elif reason == "feedback":
            self.failures.append((node, _cause(ev)))
            self.rounds[node] = self.rounds.get(node, 0) + 1
        elif reason == "exhausted":
            self.failures.append((node, _cause(ev)))
            ending: LoopEnding = "no_progress" if ev.get("cause") == "no_progress" else "exhausted"
            self._ended(node, ending)
        elif reason == "retry":
            self.failures.append((node, _cause(ev)))

    def _ended(self, declarer: str, ending: LoopEnding) -> None:
        self.loops.append(Loop(declarer, self.rounds.pop(declarer, 0), ending))

    def gate_waits(self, paused_at: str | None) -> list[GateWait]:
        """The decided gates' waits, and the gate the run waits at now (undecided)."""
        return self.waits + [GateWait(g, None, "") for g in self.paused if g == paused_at]


def _failed_loop(ev: Event) -> LoopEnding:
    """How a loop whose reviewer failed for good ended: a judgment the arc did not fire on means
    its rounds (or the run's hops) were spent; anything else broke it."""
    cause = ev.get("cause")
    if cause == "no_progress":
        return "no_progress"
    if ev.get("judged") and cause in JUDGMENT_CAUSES:
        return "exhausted"
    return "broken"


def _cause(ev: Event) -> str:
    cause = ev.get("cause")
    return _text(cause, "cause") if cause else UNNAMED


def _ts(ev: Event) -> datetime:
    return parse_ts(ev["ts"])


def parse_ts(value: object) -> datetime:
    """An event's ``ts`` (ISO 8601, UTC) as an aware datetime; Malformed when it is none."""
    if not isinstance(value, str):
        raise Malformed(f"a time is {type(value).__name__}, not text")
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise Malformed(f"{value[:40]!r} is not an ISO 8601 time") from None
    if when.tzinfo is None:
        raise Malformed(f"{value[:40]!r} names no time zone")
    return when


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise Malformed(f"{what} is {type(value).__name__}, not text")
    return value


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise Malformed(f"{what} is {value!r:.40}, not a finite number")
    return float(value)
