"""Run status: every run's derived status, one run's ledger, and the replay check."""

from __future__ import annotations

from pathlib import Path

from omg.cli import ledger
from omg.cli.next import next_step
from omg.errors import Hint, OmgError, StateError
from omg.graph.build import graph_from_data
from omg.state import State, diff, fold
from omg.state.store import RunDir, canonical_json


def derive(state: State, rundir: RunDir) -> str:
    """running / paused at gate X / paused for leg budget / passed / failed / abandoned."""
    legs = state["legs"]
    if legs and legs[-1]["outcome"] is None:
        return "running" if rundir.probe_lock() == "held" else "abandoned"
    if state["status"] == "paused":
        if state["paused_at"]:
            return f"paused at gate {state['paused_at']}"
        reason = legs[-1].get("reason") if legs else None
        return "paused for leg budget" if reason == "leg_budget" else "paused"
    return str(state["status"])


def situation(state: State, derived: str) -> Hint | None:
    """Which step of the "what next" table a run with this derived status needs (None: done)."""
    rid, gate = state["run_id"], state["paused_at"]
    if gate and (derived == "abandoned" or derived.startswith("paused at gate")):
        return Hint("decide", rid, gate)
    if derived == "abandoned" or derived.startswith("paused"):
        return Hint("resume", rid)
    if derived == "failed":
        return Hint("retry_failed", rid)
    if derived == "running":
        return Hint("wait", rid)
    return None


def next_line(state: State, derived: str) -> str:
    hint = situation(state, derived)
    text = "nothing to do" if hint is None else next_step(hint)
    if derived == "abandoned":
        why = "pausing at its gate" if state["paused_at"] else "finishing (killed?)"
        return f"its last leg ended without {why}; nodes in flight then re-run — {text}"
    return text


def _load(rundir: RunDir) -> State:
    """The snapshot caught up with the events a killed leg appended after its last write."""
    from omg.state.store import load_run

    return load_run(rundir)[0]


def show(runs_dir: Path, run_id: str | None, *, by_node: bool = False) -> str:
    if run_id is not None:
        rundir = RunDir(runs_dir / run_id)
        if not rundir.exists():
            raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
        state = _load(rundir)
        derived = derive(state, rundir)
        graph = graph_from_data(state["graph"])
        table = ledger.render(graph, state, rundir.read_events(), by_node=by_node)
        return (
            f"{table}\n\nstatus: {derived} "
            f"({len(state['legs'])} leg(s))\nnext: {next_line(state, derived)}"
        )
    rows = [("RUN", "GRAPH", "STATUS", "LEGS", "COST")]
    for path in sorted(p for p in runs_dir.glob("*") if p.is_dir()) if runs_dir.is_dir() else []:
        rundir = RunDir(path)
        if not rundir.exists():  # a first leg killed before its first event: nothing to show
            rows.append((path.name, "?", "never started", "0", "-"))
            continue
        try:
            state = _load(rundir)
        except OmgError as exc:
            rows.append((path.name, "?", f"damaged: {str(exc)[:60]}", "?", "?"))
            continue
        rows.append(
            (
                path.name,
                str(state["graph"].get("name", "")),
                derive(state, rundir),
                str(len(state["legs"])),
                f"${state['cost_usd']:.4f}",
            )
        )
    if len(rows) == 1:
        return f"no runs in {runs_dir}"
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def replay(runs_dir: Path, run_id: str, *, write: bool = False) -> tuple[str, int]:
    """Fold events.jsonl from nothing and compare with state.json (exit 0 equal, 1 differ)."""
    rundir = RunDir(runs_dir / run_id)
    rebuilt = fold(rundir.read_events())
    if write:
        rundir.lock()
        try:
            rundir.write_state(rebuilt)
        finally:
            rundir.close()
        return f"rewrote {rundir.state_path} from {rundir.events_path}", 0
    state = rundir.read_state()
    if canonical_json(state) == canonical_json(rebuilt):
        return f"run {run_id!r}: state.json equals the fold of events.jsonl (seq {state['seq']})", 0
    lines = diff(state, rebuilt)
    return f"run {run_id!r}: state.json differs from the fold of events.jsonl:\n  " + "\n  ".join(
        lines
    ), 1
