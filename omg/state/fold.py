"""The run state: a pure fold of events.jsonl into the snapshot written as state.json."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal, cast

from omg.kinds import EXHAUSTED_GATE_SUFFIX, Ruling, Verdict
from omg.records import Dispatched, GateRecord, LegRecord, NodeRecord, State
from omg.spend import LAST_REPORTED, Spend

if TYPE_CHECKING:
    from omg.state.events import Event

STATE_SCHEMA = 1
EVENT_SCHEMA = 1


#: Fields that are data about time or sessions; determinism compares everything else.
VOLATILE_RECORD_FIELDS: tuple[Literal["duration_s", "session_id"], ...] = (
    "duration_s",
    "session_id",
)
VOLATILE_LEG_FIELDS = ("started", "finished")


def empty_state() -> State:
    """The state before any event: what replay folds from."""
    return {
        "schema": STATE_SCHEMA,
        "run_id": "",
        "graph_source": "",
        "graph_sha256": "",
        "graph": {},
        "inputs": {},
        "nodes": {},
        "gates": {},
        "legs": [],
        "hops": 0,
        "worktrees": {},
        "paused_at": None,
        "status": "running",
        "cost_usd": 0.0,
        "seq": 0,
    }


def fold(events: Iterable[Event], state: State | None = None) -> State:
    """Apply ``events`` in order to ``state`` (a copy; empty when None) and return it."""
    st = empty_state() if state is None else copy.deepcopy(state)
    for ev in events:
        apply(st, ev)
    return st


def apply(st: State, ev: Event) -> None:
    """Fold one event into ``st`` in place. ``node_started`` changes nothing (not even seq)."""
    kind = ev["event"]
    if kind == "node_started":
        return
    st["seq"] = ev["seq"]
    handler = _HANDLERS.get(kind)
    if handler is not None:
        handler(st, ev)


def _run_started(st: State, ev: Event) -> None:
    if ev["leg"] == 1:
        st["run_id"] = ev["run_id"]
        st["graph_source"] = ev.get("graph_source", "")
        st["graph_sha256"] = ev.get("graph_sha256", "")
        st["graph"] = copy.deepcopy(ev.get("graph", {}))
        st["inputs"] = dict(ev.get("inputs", {}))
        if "pull_request" in ev:
            st["pull_request"] = dict(ev["pull_request"])  # type: ignore[typeddict-item]
        if ev.get("rehearsal"):
            st["rehearsal"] = True
    leg: LegRecord = {
        "leg": ev["leg"], "started": ev["ts"], "finished": None, "outcome": None, "reason": None
    }  # fmt: skip
    if "ci" in ev:
        leg["ci"] = dict(ev["ci"])  # type: ignore[typeddict-item]
    if "fanout" in ev:
        leg["fanout"] = copy.deepcopy(ev["fanout"])
    st["legs"].append(leg)
    st["status"] = "running"
    if ev.get("approved_usd"):
        st["approved_usd"] = round(st.get("approved_usd", 0.0) + float(ev["approved_usd"]), 10)
    if ev.get("retry_failed"):
        _clear_failed(st, ev)
    if "guidance" in ev:
        st["guidance"] = ev["guidance"]
        st["guidance_by"] = ev.get("guidance_by", "")
    if ev.get("hops_reset"):
        st["hops"] = 0


def _clear_failed(st: State, ev: Event) -> None:
    """``--retry-failed``: the records ``rearm`` names become pending again (their spend kept),
    and the implicit gates of the loops it re-arms forget their decisions."""
    rearm, forget = (
        (ev["rearm"], ev.get("forget_gates", ())) if "rearm" in ev else _legacy_rearm(st)
    )
    for gate in forget:
        st["gates"].pop(gate, None)
        if st["paused_at"] == gate:
            st["paused_at"] = None
    for nid in rearm:
        if nid not in st["nodes"]:
            continue
        rec = _record(st, nid)
        rec["verdict"] = ""
        rec["round"] = 0
        rec.pop("provenance", None)
        rec.pop("cause", None)
        rec.pop("judged", None)
        rec.pop("awaiting", None)
        rec.pop("lane_trees", None)  # fresh rounds compare with nothing before them


def _legacy_rearm(st: State) -> tuple[list[str], list[str]]:
    """What a ``retry_failed`` event written before events carried ``rearm`` re-armed.

    Those events left the set to the reader; it is rebuilt here from the snapshotted graph
    data (feedback bodies: nodes on a depends_on path from ``rerun`` to the declarer), so old
    event files fold exactly as they did.
    """
    nodes = st["nodes"]
    graph_nodes = st["graph"].get("nodes", [])
    parents = {str(n["id"]): [str(p) for p in n.get("depends_on", [])] for n in graph_nodes}
    rejected = {g for g, d in st["gates"].items() if d.get("decision") == "reject"}
    cleared = {
        nid
        for nid, rec in nodes.items()
        if (rec["verdict"] == "FAIL" and nid not in rejected) or rec.get("awaiting")
    }
    forget: list[str] = []
    arcs = {
        str(n["id"]): str(n["feedback"]["rerun"])
        for n in graph_nodes
        if isinstance(n.get("feedback"), dict)
    }
    for nid in sorted(cleared):
        rec = nodes[nid]
        if nid in arcs and (rec.get("round", 0) > 0 or rec.get("awaiting")):
            cleared.update(_between(parents, arcs[nid], nid))
            forget.append(rec.get("awaiting") or nid + EXHAUSTED_GATE_SUFFIX)
    return sorted(cleared), forget


def _between(parents: Mapping[str, list[str]], target: str, declarer: str) -> set[str]:
    """Nodes on any depends_on path from ``target`` up to ``declarer`` (both included)."""
    on_path: dict[str, bool] = {}

    def reaches(nid: str) -> bool:  # does a path from nid down its parents reach target?
        if nid not in on_path:
            on_path[nid] = False
            hits = [reaches(p) for p in parents.get(nid, [])] if nid != target else []
            on_path[nid] = nid == target or any(hits)
        return on_path[nid]

    reaches(declarer)
    return {nid for nid, yes in on_path.items() if yes}


def _record(st: State, nid: str) -> NodeRecord:
    """The node's record, created pending."""
    return st["nodes"].setdefault(
        nid,
        {"verdict": "", "round": 0, "attempts": 0, "cost_usd": 0.0, "cost_unknown": False},
    )


def _spend(st: State, rec: NodeRecord, ev: Event) -> None:
    spend = Spend.of_event(ev)
    rec["cost_usd"] = round(rec["cost_usd"] + spend.cost_usd, 10)
    st["cost_usd"] = round(st["cost_usd"] + spend.cost_usd, 10)
    if spend.cost_unknown:
        rec["cost_unknown"] = True


def _worktree(st: State, ev: Event) -> None:
    if "worktree_commit" in ev:
        st["worktrees"][ev["worktree"]] = {
            "branch": ev["worktree_branch"],
            "commit": ev["worktree_commit"],
        }


def _node_retried(st: State, ev: Event) -> None:
    _worktree(st, ev)
    rec = _record(st, ev["node_id"])
    plain = _plain(rec)
    _spend(st, rec, ev)
    rec["attempts"] = rec.get("attempts", 0) + 1
    if ev.get("reason") == "retry":
        rec["retries"] = rec.get("retries", 0) + 1
    if ev.get("reason") == "feedback":
        # Arc fired: the declarer becomes a non-terminal marker of the round now beginning.
        plain = _plain(rec)
        plain["verdict"] = ""
        plain["round"] = ev["round"]
        rec["cause"] = ev.get("cause")
        plain["detail"] = ev.get("detail", "")
        rec.pop("provenance", None)
        if "lane_trees" in ev:
            rec["lane_trees"] = dict(ev["lane_trees"])
        else:
            rec.pop("lane_trees", None)
        st["hops"] += 1
        st["rounds"] = st.get("rounds", 0) + 1
    if ev.get("reason") in ("feedback", "exhausted"):  # the structured reply it ended with
        if "output" in ev:
            plain["output"] = ev["output"]
        else:
            rec.pop("output", None)
    if ev.get("reason") == "exhausted":
        # A spent loop escalating to its implicit gate: it awaits that gate from here on (the
        # gate_paused that follows on one machine says the same; a fan-out job writes none).
        node = str(ev["node_id"])
        _await(rec, node + EXHAUSTED_GATE_SUFFIX, ev)


def _plain(rec: NodeRecord | LegRecord | GateRecord) -> dict[str, object]:
    """The record itself, written key by key as an event says or trimmed (values as recorded)."""
    return cast("dict[str, object]", rec)


def _await(rec: NodeRecord, gate: str, ev: Event) -> None:
    """The record awaits ``gate``: no verdict until it is decided."""
    plain = _plain(rec)
    plain["verdict"] = ""
    rec["awaiting"] = gate
    plain["detail"] = ev.get("detail", "")


def _terminal(st: State, ev: Event, verdict: Verdict) -> None:
    _worktree(st, ev)
    rec = _record(st, ev["node_id"])
    _spend(st, rec, ev)
    plain = _plain(rec)
    rec["verdict"] = verdict
    plain["round"] = ev.get("round", 0)
    rec["attempts"] = rec.get("attempts", 0) + 1
    keys = (
        "session_id", "duration_s", "detail", "provenance", "cause", "judged", "artifact", "output"
    )  # fmt: skip
    fields: Mapping[str, object] = ev
    for key in (*keys, *LAST_REPORTED, "permission_denials", "cli_version"):
        if key in ev:
            plain[key] = fields[key]
        elif (
            key in ("provenance", "cause", "judged", "permission_denials", "artifact", "output")
            and key in rec
        ):
            del plain[key]
    rec.pop("awaiting", None)


def _node_passed(st: State, ev: Event) -> None:
    _terminal(st, ev, "PASS")


def _node_failed(st: State, ev: Event) -> None:
    _terminal(st, ev, "FAIL")


def _gate_paused(st: State, ev: Event) -> None:
    if st["paused_at"] is None:
        st["paused_at"] = ev["node_id"]
    declarer = ev.get("declarer")
    if declarer:  # an exhausted loop escalated to its implicit gate
        rec = _record(st, declarer)
        _await(rec, ev["node_id"], ev)


def _gate_decided(st: State, ev: Event) -> None:
    decision: Ruling = "approve" if ev["event"] == "gate_approved" else "reject"
    st["gates"][ev["node_id"]] = {
        "decision": decision,
        "by": ev.get("by", ""),
        "reason": ev.get("reason") or "",
        "at": ev["ts"],
        "state_ref": ev.get("state_ref", ""),
    }
    if st["paused_at"] == ev["node_id"]:
        st["paused_at"] = None
    if ev.get("hops_reset"):  # a human decided: the loops get a fresh hop budget
        st["hops"] = 0


def _run_finished(st: State, ev: Event) -> None:
    if st["legs"]:
        leg = st["legs"][-1]
        leg["finished"], leg["outcome"], leg["reason"] = ev["ts"], ev["outcome"], ev.get("reason")
        wait, capped = ev.get("wait"), ev.get("capped")
        if wait is not None:
            leg["wait"] = copy.deepcopy(wait)
        if capped is not None:
            leg["capped"] = copy.deepcopy(capped)
        caps = ev.get("caps")
        if caps:
            leg["caps"] = copy.deepcopy(caps)
    st["status"] = ev["outcome"]
    if ev["outcome"] != "paused":
        st["paused_at"] = None


def _run_superseded(st: State, ev: Event) -> None:
    """A newer pull request head took the run's place: nothing it decided speaks for that head."""
    st["status"] = "superseded"
    st["superseded_by"] = ev["head_sha"]
    st["paused_at"] = None


def _leg_dispatched(st: State, ev: Event) -> None:
    """The next leg a leg dispatched, on that leg's record (the note may be folded in later)."""
    legs = [leg for leg in st["legs"] if leg["leg"] == ev["leg"]] or st["legs"][-1:]
    if legs:
        sent: Dispatched = {}
        if "workflow_run_id" in ev:
            sent["workflow_run_id"] = ev["workflow_run_id"]
        if "url" in ev:
            sent["url"] = ev["url"]
        legs[-1]["dispatched"] = sent


_HANDLERS = {
    "run_started": _run_started,
    "node_retried": _node_retried,
    "node_passed": _node_passed,
    "node_failed": _node_failed,
    "gate_paused": _gate_paused,
    "gate_approved": _gate_decided,
    "gate_rejected": _gate_decided,
    "run_finished": _run_finished,
    "run_superseded": _run_superseded,
    "leg_dispatched": _leg_dispatched,
    # decision_refused changes no record: the refusal lives in events.jsonl alone
}


def stable_view(st: State) -> State:
    """``st`` without time and session data: what determinism promises to reproduce."""
    out = copy.deepcopy(st)
    for rec in out["nodes"].values():
        for k in VOLATILE_RECORD_FIELDS:
            rec.pop(k, None)
    for leg in out["legs"]:
        for lk in VOLATILE_LEG_FIELDS:
            _plain(leg).pop(lk, None)
    for gate in out["gates"].values():
        _plain(gate).pop("at", None)
    return out


def diff(a: object, b: object, path: str = "") -> list[str]:
    """Field-by-field differences between two JSON-like values, as ``path: a != b`` lines."""
    out: list[str] = []
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in sorted(set(a) | set(b)):
            p = f"{path}.{k}" if path else str(k)
            if k not in a:
                out.append(f"{p}: missing in state.json, replay has {b[k]!r}")
            elif k not in b:
                out.append(f"{p}: state.json has {a[k]!r}, missing in replay")
            else:
                out.extend(diff(a[k], b[k], p))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out.extend(diff(x, y, f"{path}[{i}]"))
    elif a != b:
        out.append(f"{path}: state.json has {a!r}, replay has {b!r}")
    return out
