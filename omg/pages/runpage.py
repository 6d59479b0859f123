"""One run's page: its graph with each node's verdict, its executions in time leg by leg, its
feedback loops round by round with their findings, and its ledger."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from omg import schedule
from omg.graph.durations import format_duration as duration
from omg.graph.model import Graph
from omg.pages.drawing import graph_svg
from omg.pages.page import document, esc, pre, section, table
from omg.pages.svg import bars, figure
from omg.pages.timeline import Leg, leg_svg, legs, per_node
from omg.records import State
from omg.state.events import Event

_ENDED = {"node_passed": "PASS", "node_failed": "FAIL"}
_LEGEND = ("passed", "failed", "paused", "looping", "running", "pending")


@dataclass(frozen=True)
class RunView:
    """What the page shows, gathered by its command: the run's graph, state and events, its
    derived status, the ledger's rows, and the findings each reviewer's round ended with."""

    graph: Graph
    state: State
    events: Sequence[Event]
    status: str
    ledger_head: tuple[str, ...]
    ledger_rows: Sequence[tuple[str, ...]]
    findings: Mapping[int, str] = field(default_factory=dict)  # seq of a round's end → text


def statuses(graph: Graph, state: State, events: Sequence[Event]) -> dict[str, str]:
    """Each node's colour: passed, failed, paused (at a gate or awaiting one), looping (a
    reviewer mid-round), running (started, not settled, its leg open) or pending."""
    out: dict[str, str] = {}
    for nid, s in schedule.statuses(graph, state["nodes"]).items():
        rec = state["nodes"].get(nid)
        if s == "awaiting":
            out[nid] = "paused"
        elif s == "pending" and rec is not None and rec.get("round") and graph.node(nid).feedback:
            out[nid] = "looping"
        else:
            out[nid] = s
    if state["paused_at"] in out:
        out[str(state["paused_at"])] = "paused"
    leg_open = bool(state["legs"]) and state["legs"][-1]["outcome"] is None
    if leg_open:
        started = {str(e.get("node_id")) for e in events if e["event"] == "node_started"}
        for nid in started & out.keys():
            if out[nid] == "pending":
                out[nid] = "running"
    return out


def _notes(graph: Graph, state: State) -> dict[str, str]:
    out = {}
    for nid in graph.ids:
        rec = state["nodes"].get(nid)
        if rec is None:
            continue
        verdict = rec["verdict"] or ("AWAITING" if rec.get("awaiting") else "…")
        bits: list[str] = [verdict]
        if rec.get("round"):
            bits.append(f"round {rec['round']}")
        if rec["cost_usd"]:
            bits.append(f"${rec['cost_usd']:.4f}")
        out[nid] = " · ".join(bits)
    return out


def _graph_section(view: RunView) -> str:
    status = statuses(view.graph, view.state, view.events)
    legend = (
        '<p class="legend">'
        + "".join(f'<span><i class="{k}"></i>{k}</span>' for k in _LEGEND)
        + "</p>"
    )
    return section(
        "graph", "Graph", graph_svg(view.graph, status, _notes(view.graph, view.state)) + legend
    )


def _timeline_section(view: RunView) -> str:
    try:
        found = legs(view.events)
    except (ValueError, TypeError):
        return section("timeline", "Timeline", "<p>The events' times could not be read.</p>")
    parts = []
    for leg in found:
        took = (leg.end - leg.start).total_seconds()
        spent = sum(s.cost for s in leg.spans)
        when = leg.start.strftime("%Y-%m-%d %H:%M:%S %Z")
        drawn = leg_svg(leg) if leg.spans else "<p>No execution: this leg decided or noted.</p>"
        parts.append(
            f'<h3>Leg {leg.leg}</h3><p class="meta">started {esc(when)} · '
            f"took {esc(duration(took))} · {len(leg.spans)} execution(s) · ${spent:.4f} · "
            f"ended {esc(leg.outcome)}</p>" + drawn
        )
    parts.append(_where(found))
    return section("timeline", "Timeline", "\n".join(parts))


def _where(found: Sequence[Leg]) -> str:
    rows = per_node(found)
    if not rows:
        return ""
    time = bars([(n, s) for n, s, _ in rows], duration, name="time per node")
    cost = bars([(n, c) for n, _, c in rows], lambda v: f"${v:.4f}", name="cost per node")
    return (
        '<h3>Where the time and the money went</h3><div class="plots">'
        + figure(time, "time per node, every execution")
        + figure(cost, "cost per node, every execution")
        + "</div>"
    )


def _loops_section(view: RunView) -> str:
    declarers = [n for n in view.graph.nodes if n.feedback is not None]
    if not declarers:
        return section("loops", "Feedback loops", "<p>This graph has no feedback loop.</p>")
    parts = []
    for node in declarers:
        rows = []
        for ev in view.events:
            if ev.get("node_id") != node.id or ev["event"] not in (
                "node_passed", "node_failed", "node_retried"
            ):  # fmt: skip
                continue
            if ev["event"] == "node_retried" and ev.get("reason") not in ("feedback", "exhausted"):
                continue
            said = view.findings.get(int(ev["seq"]), "")
            ended = _ENDED.get(ev["event"]) or (
                "LOOPING" if ev.get("reason") == "feedback" else "EXHAUSTED"
            )
            rows.append(
                "<tr>"
                f'<td class="num">{esc(_round_of(ev))}</td><td>{esc(ended)}</td>'
                f"<td>{esc(ev.get('cause') or '')}</td><td>{esc(ev.get('detail') or '')}</td>"
                f"<td>{pre(said) if said else ''}</td></tr>"
            )
        assert node.feedback is not None
        head = (
            f"<h3>Loop of <code>{esc(node.id)}</code>: it re-runs from "
            f"<code>{esc(node.feedback.rerun)}</code>, at most {node.feedback.max} round(s)</h3>"
        )
        body = (
            '<table class="rounds"><thead><tr><th>round</th><th>verdict</th><th>cause</th>'
            "<th>detail</th><th>findings</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table>"
            if rows
            else "<p>Not reached yet.</p>"
        )
        parts.append(head + body)
    return section("loops", "Feedback loops", "\n".join(parts))


def _round_of(ev: Event) -> int:
    """The round a reviewer's verdict judged: a fired arc records the round it starts."""
    r = int(ev.get("round") or 0)
    return r - 1 if ev["event"] == "node_retried" and ev.get("reason") == "feedback" else r


def _gates_section(view: RunView) -> str:
    """Every gate decided (who, when, why, the state judged) and the one waiting now."""
    st = view.state
    rows: list[tuple[str, ...]] = [
        (gate, d["decision"], d["by"], d["at"], d["reason"], d["state_ref"])
        for gate, d in st["gates"].items()
    ]
    if st["paused_at"] and st["paused_at"] not in st["gates"]:
        rows.append((st["paused_at"], "waiting for a person", "", "", "", ""))
    if not rows:
        return section("gates", "Gates", "<p>No gate was reached.</p>")
    head = ("gate", "decision", "by", "at", "reason", "state judged")
    return section("gates", "Gates", table(head, rows, cls="gates"))


def _ledger_section(view: RunView) -> str:
    numeric = [i for i, h in enumerate(view.ledger_head) if h in ("LEG", "ROUND", "TRIES")]
    return section(
        "ledger", "Ledger",
        table([h.lower() for h in view.ledger_head], view.ledger_rows, cls="ledger",
              numeric=numeric),
    )  # fmt: skip


def run_page(view: RunView) -> str:
    """The whole page of one run."""
    st = view.state
    rehearsed = " · rehearsed (nothing spent)" if st.get("rehearsal") else ""
    meta = (
        f"graph <code>{esc(view.graph.name)}</code> · {esc(view.status)} · "
        f"{len(st['legs'])} leg(s) · ${st['cost_usd']:.4f}{rehearsed}"
    )
    return document(
        f"omg run {st['run_id']}",
        f"omg · run {st['run_id']}",
        meta,
        [
            _graph_section(view),
            _timeline_section(view),
            _loops_section(view),
            _gates_section(view),
            _ledger_section(view),
        ],
    )
