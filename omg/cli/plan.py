"""`omg plan RUN --matrix`: the next fan-out wave of a run as a GitHub job matrix."""

from __future__ import annotations

import json
import os
from pathlib import Path

from omg.errors import StateError
from omg.github import outputs
from omg.github.env import output_file
from omg.graph.load import graph_from_snapshot
from omg.matrix import plan
from omg.state.store import RunDir, load_run


def matrix(runs_dir: Path, run_id: str, max_jobs: int | None) -> tuple[str, list[str]]:
    """The matrix JSON (also written to GITHUB_OUTPUT as ``matrix`` and ``count``), and notes
    saying what was held back, which gates wait, or that the wave is empty."""
    rundir = RunDir(runs_dir / run_id)
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
    state, _ = load_run(rundir)
    graph = graph_from_snapshot(state["graph"], state["graph_source"])
    wave = plan(graph, state["nodes"], max_jobs)
    text = json.dumps(wave.include(), separators=(",", ":"))
    outputs.write_outputs(
        output_file(os.environ), {"matrix": text, "count": str(len(wave.entries))}
    )
    notes = []
    if not wave.entries:
        notes.append("empty matrix: nothing can run on a machine of its own now")
    if wave.held:
        notes.append(f"held for the next wave: {', '.join(wave.held)}")
    if wave.gates:
        notes.append(f"waiting at gate(s): {', '.join(wave.gates)}")
    return text, notes
