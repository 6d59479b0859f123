"""One node of a run in detail: its executions, and where its agent sessions' transcripts are
and what the agent did in them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from omg.cli.machine import SCHEMA, dumps
from omg.errors import StateError
from omg.graph.build import graph_from_data
from omg.graph.durations import format_duration
from omg.graph.model import Node
from omg.ledgerrows import verdict_cell
from omg.records import NO_RECORD
from omg.runners.base import AgentRuntime, Step
from omg.runners.registry import agents
from omg.state import Event, NodeRecord
from omg.state.runid import check_run_id
from omg.state.store import RunDir, load_run

#: Steps shown per session: the last ones (the whole transcript is in the file named).
SHOWN_STEPS = 12
MARKS = {"tool": "→", "text": "says", "error": "refused/failed:"}


def _open(runs_dir: Path, run_id: str, node_id: str) -> tuple[RunDir, Node, NodeRecord | None]:
    """The run (verified), the node, its record (None: it never ran)."""
    rundir = RunDir(runs_dir / check_run_id(run_id))
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
    state, _ = load_run(rundir)
    graph = graph_from_data(state["graph"])
    if node_id not in graph.by_id:
        known = ", ".join(graph.topo_order)
        raise StateError(f"run {run_id!r} has no node {node_id!r}; its nodes: {known}")
    return rundir, graph.node(node_id), state["nodes"].get(node_id)


def node_json(runs_dir: Path, run_id: str, node_id: str) -> str:
    """``status RUN --node ID --format json``: the node's record, executions and sessions."""
    rundir, node, found = _open(runs_dir, run_id, node_id)
    rec: NodeRecord = found or NO_RECORD
    runs = [e for e in rundir.read_events() if e.get("node_id") == node_id]
    ended = [e for e in runs if e["event"] in ("node_passed", "node_failed", "node_retried")]
    sessions = list(dict.fromkeys(str(e["session_id"]) for e in runs if e.get("session_id")))
    runner = agents().get(node.runtime) if node.kind == "agent" else None
    artifact = rundir.artifact(node_id)
    doc = {
        "schema": SCHEMA,
        "kind": "node",
        "run_id": run_id,
        "node_id": node_id,
        "node_kind": node.kind,
        "runtime": node.runtime if node.kind == "agent" else None,
        "verdict": verdict_cell(found).split(" ")[0] if found is not None else None,
        "cause": rec.get("cause") or None,
        "detail": str(rec.get("detail") or ""),
        "executions": [
            {
                "leg": e.get("leg"),
                "round": int(e.get("round") or 0),
                "event": e["event"],
                "verdict": e.get("verdict") or None,
                "provenance": e.get("provenance") or None,
                "cause": e.get("cause") or None,
                "reason": e.get("reason") or None,
                "cost_usd": float(e.get("cost_usd") or 0),
                "cost_unknown": bool(e.get("cost_unknown")),
                "duration_s": e.get("duration_s"),
                "session_id": e.get("session_id") or None,
                "cli_version": e.get("cli_version") or None,
                "api_retries": int(e.get("api_retries") or 0),
                "proxy": e.get("proxy"),
            }
            for e in ended
        ],
        "running_since": runs[-1]["ts"] if runs and runs[-1]["event"] == "node_started" else None,
        "permission_denials": list(rec.get("permission_denials") or []),
        "output": _shown(artifact) if artifact.exists() else None,
        "structured": rec.get("output"),
        "sessions": [_session_doc(rundir, sid, runner) for sid in sessions],
    }
    return dumps(doc)


def _session_doc(rundir: RunDir, sid: str, runner: AgentRuntime | None) -> dict[str, object]:
    kept = rundir.session(sid)
    if not kept.exists() or runner is None:
        return {"session_id": sid, "transcript": None, "steps": None}
    return {"session_id": sid, "transcript": _shown(kept), "steps": len(runner.steps(kept))}


def show_node(runs_dir: Path, run_id: str, node_id: str) -> str:
    rundir, node, found = _open(runs_dir, run_id, node_id)
    rec: NodeRecord = found or NO_RECORD
    lines = [f"node {node_id} ({node.kind}) in run {run_id}: {verdict_cell(found)}"]
    if rec.get("cause"):
        lines[0] += f" ({rec['cause']})"
    if rec.get("detail"):
        lines.append(f"detail: {rec['detail']}")
    runs = [e for e in rundir.read_events() if e.get("node_id") == node_id]
    finished = [e for e in runs if e["event"] in ("node_passed", "node_failed", "node_retried")]
    lines.append(f"executions: {len(finished)}")
    lines += [f"  {_execution(e, node.runtime)}" for e in finished]
    if runs and runs[-1]["event"] == "node_started":
        lines.append(f"  running since {runs[-1]['ts']} (leg {runs[-1].get('leg', '?')})")
    denials = rec.get("permission_denials") or []
    if denials:
        lines.append("permission denials: " + "; ".join(denials))
    artifact = rundir.artifact(node_id)
    if artifact.exists():
        lines.append(f"output: {_shown(artifact)}")
    if "output" in rec:  # escaped JSON: no control character of the reply reaches a terminal
        said = json.dumps(rec["output"], indent=2, sort_keys=True).replace("\n", "\n  ")
        lines.append(f"structured reply (output_schema):\n  {said}")
    sessions = list(dict.fromkeys(str(e["session_id"]) for e in runs if e.get("session_id")))
    runner = agents().get(node.runtime) if node.kind == "agent" else None
    for sid in sessions:
        lines += _session(rundir, sid, runner)
    if node.kind == "agent" and not sessions:
        lines.append("no agent session recorded yet")
    return "\n".join(lines)


def _execution(e: Event, runtime: str) -> str:
    """One line per ended execution; one that was retried or fired a feedback round says so
    (its event carries the round it led to, so no round of its own is shown)."""
    if e["event"] == "node_retried":
        what = {"feedback": "fired feedback", "correction": "malformed, corrected"}.get(
            str(e.get("reason")), "FAIL, retried"
        )
        head = [f"leg {e.get('leg', '?')}", f"{what} ({e.get('cause') or '?'})"]
    else:
        verdict = str(e.get("verdict", ""))
        if e.get("provenance") and verdict == "PASS":
            verdict += f" ({e['provenance']})"
        if e.get("cause"):
            verdict += f" ({e['cause']})"
        head = [f"leg {e.get('leg', '?')}", f"round {e.get('round') or 0}", verdict]
    cost = "cost unknown" if e.get("cost_unknown") else f"${float(e.get('cost_usd') or 0):.4f}"
    used = e.get("usage") or {}
    tokens = int(used.get("input_tokens", 0)) + int(used.get("output_tokens", 0))
    if e.get("cost_unknown") and tokens:
        cost = f"cost unknown ({tokens} tokens)"
    parts = [*head, cost]
    if e.get("duration_s") is not None:
        parts.append(format_duration(float(e["duration_s"])))
    if e.get("session_id"):
        parts.append(f"session {str(e['session_id'])[:8]}")
    if e.get("cli_version"):
        parts.append(f"{runtime} {e['cli_version']}")
    if e.get("api_retries"):
        parts.append(f"{e['api_retries']} API retries")
    proxy = e.get("proxy")
    if proxy is not None:  # what omg's model proxy forwarded and refused
        whys = ", ".join(dict.fromkeys(r["why"] for r in proxy["refusals"]))
        parts.append(f"proxy: {proxy['requests']} request(s)")
        if proxy["refused"]:
            parts.append(f"refused {proxy['refused']} request(s) ({whys})")
    return "  ".join(parts)


def _session(rundir: RunDir, sid: str, runner: AgentRuntime | None) -> list[str]:
    kept = rundir.session(sid)
    if not kept.exists() or runner is None:
        return [
            f"session {sid}: no kept transcript — never started, over the size cap (then gone "
            "with its execution's room), or still running: then it is in that room, under "
            + (runner.transcript_home if runner is not None else "its runtime's directory")
        ]
    done = runner.steps(kept)
    head = f"session {sid}: transcript {_shown(kept)} ({len(done)} step(s))"
    shown: list[Step] = done[-SHOWN_STEPS:]
    out = [head]
    if len(done) > len(shown):
        out.append(f"  … {len(done) - len(shown)} earlier step(s)")
    out += [f"  {s.at[11:19] or '--:--:--'}  {MARKS[s.kind]} {s.text}" for s in shown]
    return out


def _shown(path: Path) -> str:
    """A path as the user would type it from here."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
