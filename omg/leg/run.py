"""A run opened once: its directory, the snapshot read from its state.json, and the graph
that snapshot holds (rebuilt only when asked for)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from omg.state import State
from omg.state.store import RunDir

if TYPE_CHECKING:
    from omg.graph.model import Graph


@dataclass(frozen=True)
class Run:
    """Run ``rundir`` as its state.json stood when opened; open it again after it moved on."""

    rundir: RunDir
    state: State

    @cached_property
    def graph(self) -> Graph:
        """The graph the run snapshotted, checked by the same schema and rules as a file."""
        from omg.graph.load import graph_from_snapshot

        return graph_from_snapshot(self.state["graph"], self.state["graph_source"])

    @property
    def last_seq(self) -> int:
        """The seq of the last event the snapshot folded in."""
        return self.state["seq"]


def open_run(runs_dir: Path, run_id: str) -> Run:
    """Run ``run_id`` under ``runs_dir``, its state.json read once."""
    rundir = RunDir(runs_dir / run_id)
    return Run(rundir, rundir.read_state())
