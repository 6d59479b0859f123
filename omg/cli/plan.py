"""`omg plan RUN --matrix`: the next fan-out wave of a run as a GitHub job matrix."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from omg.errors import StateError, UsageError
from omg.github import outputs
from omg.github.env import git_tokens, output_file
from omg.graph.load import graph_from_snapshot
from omg.matrix import plan
from omg.state.runid import check_run_id
from omg.state.store import RunDir, load_run


@dataclass(frozen=True)
class Source:
    """Where the run comes from: the runs directory alone, or a remote (started if absent)."""

    fetch: str | None = None
    start: Path | None = None
    inputs: Mapping[str, str] = field(default_factory=dict)


def matrix(
    runs_dir: Path, run_id: str, max_jobs: int | None, source: Source | None = None
) -> tuple[str, list[str]]:
    """The matrix JSON (also written to GITHUB_OUTPUT as ``matrix``, ``count`` and ``base``,
    the run-branch commit it was planned at), and notes saying what was held back, which gates
    wait, or that the wave is empty."""
    check_run_id(run_id)
    notes: list[str] = []
    base = _fetched(runs_dir, run_id, source, notes) if source and source.fetch else ""
    rundir = RunDir(runs_dir / run_id)
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
    state, _ = load_run(rundir)
    graph = graph_from_snapshot(state["graph"], state["graph_source"])
    wave = plan(graph, state["nodes"], max_jobs)
    text = json.dumps(wave.include(), separators=(",", ":"))
    outputs.write_outputs(
        output_file(os.environ),
        {"matrix": text, "count": str(len(wave.entries)), "base": base},
    )
    if not wave.entries:
        notes.append("empty matrix: nothing can run on a machine of its own now")
    if wave.held:
        notes.append(f"held for the next wave: {', '.join(wave.held)}")
    if wave.gates:
        notes.append(f"waiting at gate(s): {', '.join(wave.gates)}")
    if state["paused_at"]:
        notes.append(f"the run waits at gate {state['paused_at']}")
    return text, notes


def _fetched(runs_dir: Path, run_id: str, source: Source, notes: list[str]) -> str:
    """Fetch the run (starting it when the remote has none and ``source.start`` names the
    graph); the run branch's head."""
    from omg.git.repo import open_repo
    from omg.leg.commits import attach, fetch_run

    remote = source.fetch or "origin"
    tokens = git_tokens(os.environ)
    root = Path.cwd()

    def warn(message: str) -> None:
        print(f"omg plan: {message}", file=sys.stderr)

    found = fetch_run(
        root, runs_dir / run_id, run_id, remote, warn=warn, tokens=tokens, missing_ok=True
    )
    if not found:
        if source.start is None:
            raise StateError(
                f"{remote} has no run {run_id!r}; start it with --start GRAPH, or check the id "
                f"with `git ls-remote {remote} 'refs/heads/omg/runs/*'`"
            )
        from omg.graph.load import load_graph
        from omg.leg.loop import LegOptions
        from omg.leg.start import Environment, start_run

        graph = load_graph(source.start)
        env = Environment(runs_dir=runs_dir, root=root, warn=warn)
        env.commits = attach(root, run_id, push=remote, base="HEAD", warn=warn, tokens=tokens)
        if env.commits is None:
            raise UsageError(f"{root} is not a git checkout; run actions/checkout first")
        opts = LegOptions(only=frozenset(), pause_idle=False)
        start_run(graph, source.start, source.inputs, env, opts, run_id=run_id)
        notes.append(f"started run {run_id} of {graph.name!r} on {remote}")
    repo = open_repo(root, tokens=tokens)
    return (repo.run_head(run_id) if repo is not None else None) or ""
