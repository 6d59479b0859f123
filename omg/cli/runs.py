"""Commands: what `omg run`, `omg resume` and `omg clean` do, between the CLI and the engine."""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from omg.cli import ledger
from omg.errors import UsageError
from omg.graph.model import EXHAUSTED_GATE_SUFFIX, Graph
from omg.leg.loop import LegOptions, LegResult
from omg.leg.start import EXIT, Decision, Environment, resume_run, start_run
from omg.state.fold import State


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # a container user with no passwd entry and no $USER
        return "unknown"


def _warn(msg: str) -> None:
    print(msg, file=sys.stderr)


def _environment(runs_dir: Path) -> Environment:
    return Environment(runs_dir=runs_dir, root=Path.cwd())


def _report(
    run_id: str, result: LegResult | None, state: State, graph_data: Mapping[str, object]
) -> int:
    from omg.graph.build import graph_from_data

    graph = graph_from_data(graph_data)
    print()
    print(ledger.render(graph, state))
    if result is None:
        print(f"\nrun {run_id!r}: nothing to do — {state['status']}")
        return EXIT.get(state["status"], 0) if state["status"] != "paused" else 4
    print()
    if result.outcome == "passed":
        print(f"run {run_id!r} passed.")
    elif result.outcome == "failed":
        print(
            f"run {run_id!r} failed ({result.detail}). Re-run the failed nodes with:\n"
            f"  omg resume {run_id} --retry-failed"
        )
    elif result.reason == "gate":
        gate = result.paused_at or ""
        print(
            f"Paused at gate {gate!r}: {_gate_question(graph, state, gate)}\nDecide it with:\n"
            f"  omg resume {run_id} --approve {gate}\n"
            f"  omg resume {run_id} --reject {gate} --reason TEXT"
        )
    else:
        print(
            f"run {run_id!r} paused for its leg budget ({result.detail}). Continue with:\n"
            f"  omg resume {run_id}"
        )
    return EXIT[result.outcome]


def _gate_question(graph: Graph, state: State, gate: str) -> str:
    """What the gate asks: its description, or an exhausted loop's last verdict."""
    if gate in graph.by_id:
        return graph.node(gate).description or "(no description)"
    declarer = gate.removesuffix(EXHAUSTED_GATE_SUFFIX)
    detail = state["nodes"].get(declarer, {}).get("detail", "")
    return f"accept {declarer!r} as it is? {detail}".strip()


def _git_hooks(
    env: Environment, run_id: str, *, commit: bool, push: str | None, base: str = "HEAD"
) -> None:
    if not commit:
        if push:
            raise UsageError("--push needs commits; drop --no-commit")
        return
    try:
        from omg.leg.commits import attach
    except ImportError:  # git support not installed in this build
        return
    env.hooks = attach(env.root, run_id, push=push, base=base, warn=_warn)
    if env.hooks is None and push:
        raise UsageError(f"--push {push}: {env.root} is not inside a git repository")


def run(
    path: Path,
    inputs: Mapping[str, str],
    *,
    run_id: str | None,
    runs_dir: Path,
    concurrency: int | None,
    max_minutes: float | None,
    max_nodes: int | None,
    push: str | None,
    commit: bool,
    base: str,
) -> int:
    from omg.graph.load import load_graph
    from omg.leg.start import new_run_id, resolve_inputs

    graph = load_graph(path)
    resolve_inputs(graph, inputs)  # refuse bad inputs before anything is created
    env = _environment(runs_dir)
    rid = run_id or new_run_id(graph, runs_dir)
    _git_hooks(env, rid, commit=commit, push=push, base=base)
    opts = LegOptions(concurrency or graph.concurrency, max_minutes, max_nodes)
    print(f"Running graph {graph.name!r} (run {rid})", file=sys.stderr)
    rid, result, state = start_run(graph, path, inputs, env, opts, run_id=rid)
    return _report(rid, result, state, graph.data)


def resume(
    run_id: str,
    *,
    runs_dir: Path,
    retry_failed: bool,
    approve: str | None,
    reject: str | None,
    reason: str,
    by: str | None,
    concurrency: int | None,
    max_minutes: float | None,
    max_nodes: int | None,
    fetch: str | None,
    push: str | None,
    commit: bool,
) -> int:
    from omg.github.env import actor
    from omg.graph.load import graph_from_snapshot

    env = _environment(runs_dir)
    if fetch:
        from omg.leg.commits import fetch_run

        fetch_run(env.root, runs_dir / run_id, run_id, fetch, warn=_warn)
    _git_hooks(env, run_id, commit=commit, push=push)
    decision = None
    gate = approve or reject
    if gate:
        who = by or actor(os.environ) or _os_user()
        decision = Decision(gate, approve is not None, who, reason)

    def options(graph: Graph) -> LegOptions:
        return LegOptions(concurrency or graph.concurrency, max_minutes, max_nodes)

    print(f"Resuming run {run_id!r}", file=sys.stderr)
    result, state = resume_run(
        run_id,
        env,
        options,
        retry_failed=retry_failed,
        decision=decision,
        snapshot_loader=graph_from_snapshot,
        warn=_warn,
    )
    return _report(run_id, result, state, state["graph"])


def dry_run(path: Path, inputs: Mapping[str, str]) -> int:
    from omg.graph.load import load_graph
    from omg.leg.dryrun import render_plan

    print(render_plan(load_graph(path), path, inputs))
    return 0


def clean(run_id: str, *, remote: str | None) -> int:
    from omg.leg.commits import clean_run

    for note in clean_run(Path.cwd(), run_id, remote=remote):
        print(note)
    return 0
