"""The ledger: one row per execution of a node, derived from the events (pure, graph-free).

An execution is one ``node_started`` and everything up to the event that ends it: its retries
(``node_retried`` reason ``retry``) ride along, and it ends with ``node_passed``,
``node_failed`` or a ``node_retried`` that closes it (``feedback``: its arc fired;
``exhausted``: its loop escalated to a gate; ``leg_budget``: deferred to the next leg;
``limit``: a provider's limit stopped it, the run waits; ``correction``: its reply did not match
the node's output_schema, and the correction turn that follows in the same session is a row of
its own, priced, ending as the execution does). A gate
decision, or a node refused before it could start, is an execution of no attempts. An
execution still open when the stream ends was cut by a killed leg (or is running now). Every
event that carries a cost belongs to exactly one row, so the rows' costs sum to the state's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from omg.state.events import Event

RowVerdict = Literal[
    "PASS", "FAIL", "LOOPING", "AWAITING", "DEFERRED", "WAITING", "CUT", "RUNNING", "MALFORMED"
]
_CLOSING = {
    "feedback": "LOOPING",
    "exhausted": "AWAITING",
    "leg_budget": "DEFERRED",
    "limit": "WAITING",  # a provider's limit stopped it: the run waits for the reset
    "correction": "MALFORMED",  # its reply broke output_schema: the next row corrects it
}


@dataclass(frozen=True)
class Limits:
    """What the ledger needs to know of the graph: each body node's loop max and retry max."""

    rounds: Mapping[str, int] = field(default_factory=dict)  # node → its loop's feedback.max
    retries: Mapping[str, int] = field(default_factory=dict)  # node → retry.max


@dataclass
class Row:
    """One execution: which node, in which leg and round, what it cost and how it ended."""

    node_id: str
    leg: int
    round: int
    attempts: int = 0
    cost_usd: float = 0.0
    cost_unknown: bool = False
    duration_s: float | None = None
    verdict: RowVerdict = "RUNNING"
    provenance: str | None = None
    cause: str | None = None
    detail: str = ""
    retries: int = 0
    tokens: int = 0  # input and output tokens, as the execution's last event reported them
    anomaly: str = ""  # a cost that could not be priced as reported (recorded as $0)
    correction: bool = False  # the correction turn of a reply that broke output_schema


@dataclass
class Ledger:
    """Every execution's row, in the order the executions started."""

    rows: list[Row]

    @property
    def total_usd(self) -> float:
        return round(sum(r.cost_usd for r in self.rows), 10)

    @property
    def cost_unknown(self) -> bool:
        return any(r.cost_unknown for r in self.rows)

    @property
    def tokens(self) -> int:
        """The tokens of every execution whose cost is unknown (what an unpriced one used)."""
        return sum(r.tokens for r in self.rows if r.cost_unknown)

    @property
    def anomalies(self) -> int:
        """Executions whose cost could not be priced as reported."""
        return sum(1 for r in self.rows if r.anomaly)

    @property
    def retries(self) -> int:
        return sum(r.retries for r in self.rows)

    @property
    def feedback_rounds(self) -> int:
        """Loop re-entries over the whole run (not reset by human decisions, unlike hops)."""
        return sum(1 for r in self.rows if r.verdict == "LOOPING")


def ledger(events: Iterable[Event], limits: Limits = Limits()) -> Ledger:
    """Fold the event stream into its execution rows."""
    book = Book()
    book.feed(events)
    return book.closed(limits)


@dataclass
class Book:
    """The fold of the rows so far, which the next events go on from: every row begun, the
    ones still open (by node), and whether a leg is running. ``closed`` ends it, in place.
    ``state/kept.py`` keeps one on disk: a change to the fold or to ``Row`` bumps its FORMAT."""

    rows: list[Row] = field(default_factory=list)
    open_: dict[str, Row] = field(default_factory=dict)
    running: bool = False

    def feed(self, events: Iterable[Event]) -> None:
        """Fold ``events`` (the ones after those already folded) into the rows."""
        rows, open_, running = self.rows, self.open_, self.running
        for ev in events:
            kind = ev["event"]
            nid = str(ev.get("node_id", ""))
            if kind == "run_started":
                _cut(open_)  # a leg that died with these in flight
                open_.clear()
                running = True
            elif kind == "run_finished":
                running = False
            elif kind == "node_started":
                row = Row(nid, int(ev["leg"]), int(ev.get("round", 0) or 0))
                open_[nid] = row
                rows.append(row)
            elif kind in ("node_retried", "node_passed", "node_failed"):
                _ends(rows, open_, ev, kind, nid)
        self.running = running

    def closed(self, limits: Limits) -> Ledger:
        """The ledger of the events folded: the rows still open when the stream ends were cut,
        unless a leg is running. Changes the rows: the book is not fed after this."""
        if not self.running:
            _cut(self.open_)
        for row in self.rows:
            row.detail = _detail(row, limits)
        return Ledger(self.rows)


def _cut(open_: dict[str, Row]) -> None:
    """The executions still open when their leg ended: cut."""
    for row in open_.values():
        row.verdict = "CUT"
        row.detail = row.detail or "the leg ended (killed?) before this execution did"


def _ends(rows: list[Row], open_: dict[str, Row], ev: Event, kind: str, nid: str) -> None:
    """A node_retried, node_passed or node_failed: on its open execution's row, or a row of its
    own (a gate's decision, a node refused before it could start)."""
    started = open_.get(nid)
    row = started or _unstarted(rows, ev)
    row.attempts += started is not None  # a decision or a refusal is no attempt
    row.cost_usd = round(row.cost_usd + float(ev.get("cost_usd", 0.0) or 0.0), 10)
    row.cost_unknown = row.cost_unknown or bool(ev.get("cost_unknown"))
    row.anomaly = str(ev.get("cost_anomaly") or row.anomaly)
    reason = ev.get("reason")
    if kind == "node_retried" and reason == "retry":
        row.retries += 1
        return
    open_.pop(nid, None)
    usage = ev.get("usage") or {}
    row.tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    row.duration_s = ev.get("duration_s")
    row.cause = ev.get("cause")
    row.detail = str(ev.get("detail") or "")
    denied = ev.get("permission_denials")
    if denied and kind == "node_passed":
        row.detail = "; ".join(x for x in (row.detail, f"denied {', '.join(denied)}") if x)
    if kind == "node_passed":
        row.verdict, row.provenance = "PASS", ev.get("provenance")
    elif kind == "node_failed":
        row.verdict = "FAIL"
    else:
        row.verdict = _CLOSING.get(str(reason), "FAIL")  # type: ignore[assignment]
    if reason == "correction":  # the same session, asked again: a row of its own
        turn = Row(nid, row.leg, row.round, correction=True)
        open_[nid] = turn
        rows.append(turn)


def _unstarted(rows: list[Row], ev: Event) -> Row:
    """A row for a terminal event no start preceded: a gate's decision, a node never started."""
    row = Row(str(ev["node_id"]), int(ev["leg"]), int(ev.get("round", 0) or 0))
    rows.append(row)
    return row


def _detail(row: Row, limits: Limits) -> str:
    """``feedback round k/N``, ``retry i/M``, then what the ending event said (without repeats)."""
    parts = []
    if row.round:
        parts.append(f"feedback round {row.round}/{limits.rounds.get(row.node_id, row.round)}")
    if row.retries:
        parts.append(f"retry {row.retries}/{limits.retries.get(row.node_id, row.retries)}")
    if row.correction:
        parts.append("correction turn")
    said = row.detail
    if row.verdict == "LOOPING":  # its arc fired: the detail names the round it starts
        said = said.replace("feedback round ", "fires round ", 1)
    if said and said != f"feedback round {row.round}" and not said.startswith("passed after "):
        parts.append(said)
    if row.anomaly:  # first, so a clipped detail still shows it
        parts.insert(0, f"cost anomaly: {row.anomaly}")
    return "; ".join(parts)
