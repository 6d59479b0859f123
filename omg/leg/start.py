"""Legs: starting a run and resuming it, one process at a time, from its run directory."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from omg import schedule
from omg.cli.progress import Progress
from omg.errors import InputError, StateError, UsageError
from omg.graph.model import EXHAUSTED_GATE_SUFFIX, Graph
from omg.leg.attempt import Context
from omg.leg.loop import Leg, LegOptions, LegResult
from omg.runners import Runtime
from omg.runners.process import Spawner, spawn
from omg.state.fold import State, empty_state
from omg.state.recorder import Recorder
from omg.state.store import RunDir, ensure_ignored

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
EXIT = {"passed": 0, "failed": 1, "paused": 4}


@dataclass
class Environment:
    """What a leg takes from the outside world; tests replace any part of it."""

    runs_dir: Path
    root: Path
    parent_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    spawn: Spawner = spawn
    runtimes: Mapping[str, Runtime] | None = None
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    live: bool | None = None
    hooks: Any = None  # omg.gitrun.GitHooks when the run lives in git


@dataclass(frozen=True)
class Decision:
    """A gate decision given on the command line."""

    gate: str
    approve: bool
    by: str
    reason: str = ""


def default_runtimes() -> dict[str, Runtime]:
    from omg.runners.shell import ShellRuntime

    rts: dict[str, Runtime] = {"shell": ShellRuntime()}
    try:
        from omg.runners.claude import ClaudeRuntime

        rts["claude"] = ClaudeRuntime()
    except ImportError:  # pragma: no cover - the claude runtime ships with the package
        pass
    return rts


def resolve_inputs(graph: Graph, given: Mapping[str, str]) -> dict[str, str]:
    """Declared defaults applied; an undeclared or missing required input is refused."""
    declared = {i.name: i for i in graph.inputs}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        names = ", ".join(sorted(declared)) or "none"
        raise InputError(
            f"input(s) {', '.join(unknown)} are not declared by graph {graph.name!r} "
            f"(declared: {names}); fix the -i name or add it to the graph's inputs"
        )
    out: dict[str, str] = {}
    missing = []
    for name, spec in declared.items():
        if name in given:
            out[name] = given[name]
        elif spec.default is not None:
            out[name] = spec.default
        elif spec.required or not isinstance(graph.data.get("inputs"), Mapping):
            missing.append(name)
        else:
            out[name] = ""
    if missing:
        raise InputError(
            f"graph {graph.name!r} needs input(s) {', '.join(missing)}; pass them with "
            + " ".join(f"-i {m}=VALUE" for m in missing)
        )
    return out


def new_run_id(graph: Graph, runs_dir: Path) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{re.sub(r'[^A-Za-z0-9._-]', '-', graph.name or 'run')}"
    rid, n = base, 1
    while (runs_dir / rid).exists():
        n += 1
        rid = f"{base}-{n}"
    return rid


def start_run(
    graph: Graph,
    source: Path,
    given: Mapping[str, str],
    env: Environment,
    opts: LegOptions,
    run_id: str | None = None,
) -> tuple[str, LegResult, State]:
    """The first leg of a new run."""
    inputs = resolve_inputs(graph, given)
    if run_id is not None and not RUN_ID.match(run_id):
        raise UsageError(f"run id {run_id!r} must be letters, digits, '.', '_' or '-'")
    rid = run_id or new_run_id(graph, env.runs_dir)
    rundir = RunDir(env.runs_dir / rid)
    ensure_ignored(env.runs_dir)
    if rundir.exists():
        raise StateError(
            f"run {rid!r} already exists in {env.runs_dir}; resume it with "
            f"`omg resume {rid}` or pick another --run-id"
        )
    rundir.lock()
    try:
        rec = Recorder(rundir, empty_state(), leg=1)
        sha = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else ""
        start = dict(
            graph=dict(graph.data), graph_source=str(source), graph_sha256=sha, inputs=inputs
        )
        result = _run_leg(graph, rec, env, opts, inputs, start, [])
        return rid, result, rec.state
    finally:
        rundir.close()


def load_run(rundir: RunDir) -> tuple[State, int]:
    """The snapshot plus the tail of events it had not folded yet (a leg killed mid-write)."""
    from omg.state.fold import apply, fold

    if not rundir.state_path.exists() and rundir.events_path.exists():
        # The first leg was killed between its first event and its first snapshot.
        evs = list(rundir.read_events())
        return fold(evs), max([0, *(ev["seq"] for ev in evs)])
    state = rundir.read_state()
    tail = rundir.events_after(state["seq"])
    for ev in tail:
        apply(state, ev)
    last = max([state["seq"], *(ev["seq"] for ev in tail)])
    return state, last


def _catch_up(rundir: RunDir, state: State) -> None:
    """Bring state.json level with the events (a leg killed between an event and its snapshot
    left it behind) — even when this resume then finds nothing to do, or refuses."""
    try:
        behind = rundir.read_state()["seq"] != state["seq"]
    except StateError:  # no snapshot yet: load_run folded the events
        behind = True
    if behind:
        rundir.write_state(state)


def resume_run(
    run_id: str,
    env: Environment,
    options: Callable[[Graph], LegOptions],
    *,
    retry_failed: bool = False,
    decision: Decision | None = None,
    snapshot_loader: Callable[[Mapping[str, Any], str], Graph],
    warn: Callable[[str], None],
) -> tuple[LegResult | None, State]:
    """The next leg of an existing run; None when there was nothing to do (no leg appended)."""
    rundir = RunDir(env.runs_dir / run_id)
    if not rundir.exists():
        raise StateError(
            f"no run {run_id!r} in {env.runs_dir}; `omg status` lists the runs there, and a run "
            f"pushed from another machine is fetched with `omg resume --fetch origin {run_id}`"
        )
    rundir.lock()
    try:
        state, last = load_run(rundir)
        _catch_up(rundir, state)
        graph = snapshot_loader(state["graph"], state["graph_source"])
        _warn_if_changed(state, warn)
        status = schedule.statuses(graph, state["nodes"])
        # A leg killed before its run_finished left the run open: this leg runs what was in
        # flight, or — if nothing was — just closes the run with the outcome it reached.
        abandoned = bool(state["legs"]) and state["legs"][-1]["outcome"] is None
        if decision is not None:
            _check_decision(state, graph, decision)
        elif state["paused_at"] and not retry_failed:
            raise StateError(
                _paused_hint(state["run_id"], state["paused_at"]),
            ) from None
        if not retry_failed and decision is None and not abandoned:
            failed = [n for n, s in status.items() if s == "failed"]
            if failed and (graph.on_fail == "halt" or not schedule.unfinished(graph, status)):
                raise StateError(
                    f"run {run_id!r} failed at {', '.join(failed)}; re-run the failed "
                    f"nodes with `omg resume {run_id} --retry-failed`"
                )
        if retry_failed and not abandoned and not _has_work_after_retry(graph, state):
            return None, state
        if (
            decision is None
            and not retry_failed
            and not abandoned
            and not schedule.unfinished(graph, status)
        ):
            return None, state
        rec = Recorder(rundir, state, leg=len(state["legs"]) + 1, last_seq=last)
        start: dict[str, Any] = {"retry_failed": True} if retry_failed else {}
        decisions = [decision] if decision is not None else []
        result = _run_leg(graph, rec, env, options(graph), state["inputs"], start, decisions)
        return result, rec.state
    finally:
        rundir.close()


def _run_leg(
    graph: Graph,
    rec: Recorder,
    env: Environment,
    opts: LegOptions,
    inputs: Mapping[str, str],
    start: dict[str, Any],
    decisions: list[Decision],
) -> LegResult:
    from omg.leg.workspace import LocalWorkspace

    hooks = env.hooks
    ctx = Context(
        graph=graph,
        inputs=inputs,
        rundir=rec.rundir,
        recorder=rec,
        spawn=env.spawn,
        runtimes=env.runtimes or default_runtimes(),
        workspace=hooks.workspace
        if hooks is not None
        else LocalWorkspace(env.root, rec.rundir.run_id),
        parent_env=env.parent_env,
        budget_left=lambda: (
            None
            if graph.budget_usd is None
            else max(0.0, graph.budget_usd - float(rec.read(lambda st: st["cost_usd"])))
        ),
    )
    with Progress(env.stderr, env.live) as progress:
        rec.listen(progress)
        if hooks is not None:
            start = {**start, **hooks.before_leg(rec)}
        judged = rec.ref()  # what the human looked at: the state before this leg's first event
        rec.emit("run_started", **start)
        for d in decisions:
            _record_decision(rec, graph, d, judged)
        for d in _undelivered(graph, rec.state):  # recorded, so never asked again: applied
            _deliver(rec, graph, d)
        if hooks is not None:
            hooks.settled(rec, "", "", 0)
        leg = Leg(
            ctx,
            opts,
            on_settled=None if hooks is None else (lambda n, v, r: hooks.settled(rec, n, v, r)),
        )
        result = leg.run()
        if hooks is not None:
            hooks.after_leg(rec, result)
    return result


def _record_decision(rec: Recorder, graph: Graph, d: Decision, ref: str) -> None:
    kind = "gate_approved" if d.approve else "gate_rejected"
    rec.emit(kind, node_id=d.gate, by=d.by, reason=d.reason or None, state_ref=ref)
    _deliver(rec, graph, d)


def _deliver(rec: Recorder, graph: Graph, d: Decision) -> None:
    """The verdict a decision gives: the gate (or an exhausted loop's declarer) passes or fails."""
    target = d.gate
    rnd = 0
    if d.gate.endswith(EXHAUSTED_GATE_SUFFIX) and d.gate not in graph.by_id:
        target = d.gate[: -len(EXHAUSTED_GATE_SUFFIX)]
        rnd = int(rec.state["nodes"].get(target, {}).get("round", 0))
    why = f": {d.reason}" if d.reason else ""
    if d.approve:
        rec.emit(
            "node_passed",
            node_id=target,
            verdict="PASS",
            provenance="approved",
            round=rnd or None,
            cost_usd=0.0,
            detail=f"gate approved by {d.by}{why}",
        )
    else:
        rec.emit(
            "node_failed",
            node_id=target,
            verdict="FAIL",
            round=rnd or None,
            cost_usd=0.0,
            judged=False,
            detail=f"gate rejected by {d.by}{why}",
        )


def _undelivered(graph: Graph, state: State) -> list[Decision]:
    """Decisions on record whose verdict never landed: a leg killed between the two events."""
    out = []
    for gate, dec in state["gates"].items():
        if gate in graph.by_id:
            pending = state["nodes"].get(gate, {}).get("verdict", "") == ""
        else:  # an exhausted loop's gate: its declarer still waits there
            declarer = gate[: -len(EXHAUSTED_GATE_SUFFIX)]
            pending = state["nodes"].get(declarer, {}).get("awaiting") == gate
        if pending:
            out.append(Decision(gate, dec["decision"] == "approve", dec["by"], dec["reason"]))
    return out


def _check_decision(state: State, graph: Graph, d: Decision) -> None:
    paused = state["paused_at"]
    # A gate that asks again (an exhausted loop re-armed by --retry-failed ran out once more)
    # takes a new decision; any other gate with a recorded decision is never re-asked.
    if d.gate in state["gates"] and d.gate != paused:
        raise StateError(
            f"gate {d.gate!r} was already decided ({state['gates'][d.gate]['decision']}"
            f" by {state['gates'][d.gate]['by']}); a recorded decision is never re-asked"
        )
    if paused is None:
        raise StateError(
            f"run {state['run_id']!r} is not paused at a gate, so there is nothing to "
            f"{'approve' if d.approve else 'reject'} (a failed run is retried with "
            "--retry-failed)"
        )
    if d.gate != paused:
        raise StateError(
            f"you named gate {d.gate!r} but run {state['run_id']!r} is paused at "
            f"{paused!r}; resume with --approve {paused} or --reject {paused}"
        )


def _paused_hint(run_id: str, gate: str) -> str:
    return (
        f"run {run_id!r} is paused at gate {gate!r}; decide it with "
        f"`omg resume {run_id} --approve {gate}` or "
        f"`omg resume {run_id} --reject {gate} --reason TEXT`"
    )


def _has_work_after_retry(graph: Graph, state: State) -> bool:
    from omg.state.fold import apply, fold

    probe = fold([], state)
    apply(
        probe,
        {
            "event": "run_started",
            "seq": state["seq"] + 1,
            "leg": len(state["legs"]) + 1,
            "ts": "",
            "run_id": state["run_id"],
            "retry_failed": True,
        },
    )
    status = schedule.statuses(graph, probe["nodes"])
    return bool(schedule.unfinished(graph, status))


def _warn_if_changed(state: State, warn: Callable[[str], None]) -> None:
    src = Path(state["graph_source"])
    if (
        state["graph_sha256"]
        and src.is_file()
        and hashlib.sha256(src.read_bytes()).hexdigest() != state["graph_sha256"]
    ):
        warn(
            f"warning: {src} has changed since this run started; the run continues the graph "
            "exactly as it was snapshotted in state.json, not as the file now reads"
        )
