"""A run's executions in time, leg by leg: each execution a bar from its start to its end, bars
that overlapped on rows of their own (what ran in parallel), and where the time and money went."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from omg.graph.durations import format_duration as duration
from omg.pages.page import esc
from omg.pages.svg import fit, frame, label, tip
from omg.state.events import Event

WIDTH, LEFT, LANE = 940, 10, 24
#: A ledger verdict's colour class.
CLASS = {
    "PASS": "passed", "FAIL": "failed", "LOOPING": "looping", "AWAITING": "paused",
    "WAITING": "paused", "DEFERRED": "paused", "CUT": "running", "RUNNING": "running",
}  # fmt: skip
_CLOSING = {"feedback": "LOOPING", "exhausted": "AWAITING", "leg_budget": "DEFERRED",
            "limit": "WAITING"}  # fmt: skip


@dataclass
class Span:
    """One execution: its node, leg and round, when it started and ended, how, and its cost."""

    node: str
    leg: int
    round: int
    start: datetime
    end: datetime | None = None
    verdict: str = "RUNNING"
    cost: float = 0.0

    def seconds(self, until: datetime) -> float:
        return max(0.0, ((self.end or until) - self.start).total_seconds())


@dataclass(frozen=True)
class Leg:
    """One leg's time: when it started and ended, how, and its executions."""

    leg: int
    start: datetime
    end: datetime
    outcome: str
    spans: tuple[Span, ...]


def _when(ev: Event) -> datetime:
    return datetime.fromisoformat(str(ev["ts"]))


def legs(events: Sequence[Event]) -> list[Leg]:
    """The legs of ``events`` with their executions (closed as the ledger closes them)."""
    out: list[Leg] = []
    spans: list[Span] = []
    open_: dict[str, Span] = {}
    current: tuple[int, datetime] | None = None
    last: datetime | None = None
    outcome = "open"

    def close_leg() -> None:
        if current is not None and last is not None:
            for s in open_.values():
                s.verdict = "CUT" if outcome != "open" else "RUNNING"
            out.append(Leg(current[0], current[1], last, outcome, tuple(spans)))

    for ev in events:
        kind, at = ev["event"], _when(ev)
        if kind == "run_started":
            close_leg()
            spans, open_, current, outcome = [], {}, (int(ev["leg"]), at), "open"
        last = at
        nid = str(ev.get("node_id", ""))
        if kind == "node_started":
            span = Span(nid, int(ev["leg"]), int(ev.get("round") or 0), at)
            open_[nid] = span
            spans.append(span)
        elif kind in ("node_passed", "node_failed", "node_retried"):
            ended = open_.get(nid)
            if ended is None:
                continue  # a gate's decision or a refusal: no execution to draw
            span = ended
            span.cost += float(ev.get("cost_usd") or 0.0)
            if kind == "node_retried" and ev.get("reason") in ("retry", "correction"):
                continue
            del open_[nid]
            span.end = at
            span.verdict = {"node_passed": "PASS", "node_failed": "FAIL"}.get(
                kind, _CLOSING.get(str(ev.get("reason")), "FAIL")
            )
        elif kind == "run_finished":
            outcome = str(ev.get("outcome", ""))
    close_leg()
    return out


def lanes(spans: Sequence[Span], until: datetime) -> list[int]:
    """A row for each span: the first row free when it starts, so overlapping spans (what ran
    in parallel) sit on rows of their own."""
    free: list[datetime] = []
    rows = []
    for s in spans:
        end = s.end or until
        for i, ends in enumerate(free):
            if ends <= s.start:
                free[i] = end
                rows.append(i)
                break
        else:
            free.append(end)
            rows.append(len(free) - 1)
    return rows


def leg_svg(leg: Leg) -> str:
    """One leg's executions against its clock."""
    total = max((leg.end - leg.start).total_seconds(), 0.001)
    rows = lanes(leg.spans, leg.end)
    scale = (WIDTH - 2 * LEFT) / total
    out = []
    for span, row in zip(leg.spans, rows, strict=True):
        x = LEFT + (span.start - leg.start).total_seconds() * scale
        took = span.seconds(leg.end)
        w = max(2.0, took * scale)
        y = 8 + row * LANE
        cls = CLASS.get(span.verdict, "pending")
        said = (
            f"{span.node}: {span.verdict}, round {span.round}, {duration(took)}, ${span.cost:.4f}"
        )
        out.append(
            f'<g class="exec" data-node="{esc(span.node)}" data-verdict="{esc(span.verdict)}">'
            f'<rect class="{cls}" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{LANE - 6}" '
            f'rx="3" stroke-width="1">{tip(said)}</rect>'
            + (label(x + 4, y + 13, fit(span.node, w - 8)) if w > 24 else "")
            + "</g>"
        )
    bottom = 12 + (max(rows, default=0) + 1) * LANE
    out.append(f'<line class="axis" x1="{LEFT}" y1="{bottom}" x2="{WIDTH - LEFT}" y2="{bottom}"/>')
    for i in range(5):
        x = LEFT + (WIDTH - 2 * LEFT) * i / 4
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        out.append(label(x, bottom + 14, duration(total * i / 4), anchor=anchor, cls="small"))
    return frame(WIDTH, bottom + 22, "".join(out), cls="timeline", name=f"leg {leg.leg}")


def per_node(all_legs: Sequence[Leg]) -> list[tuple[str, float, float]]:
    """Each node's time and cost over every execution, the costliest in time first."""
    seconds: dict[str, float] = {}
    usd: dict[str, float] = {}
    for leg in all_legs:
        for s in leg.spans:
            seconds[s.node] = seconds.get(s.node, 0.0) + s.seconds(leg.end)
            usd[s.node] = usd.get(s.node, 0.0) + s.cost
    return sorted(((n, seconds[n], usd[n]) for n in seconds), key=lambda t: -t[1])
