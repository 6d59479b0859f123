"""A run opened once: its directory, the snapshot read from its state.json, and the graph
that snapshot holds (rebuilt only when asked for); and the name of a pull request's run."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from omg.state import State
from omg.state.runid import MAX_RUN_ID, slug
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


def pr_run_id(number: int, graph_name: str, head_sha: str) -> str:
    """``pr-<n>-<graph>-<head7>``: one run per pull request head, so no verdict crosses heads
    (a long graph name is cut to keep the id within a run id's length)."""
    head = head_sha[:7]
    name = slug(graph_name or "graph", MAX_RUN_ID - len(f"pr-{number}--{head}"))
    return f"pr-{number}-{name}-{head}"


def dated_run_id(graph_name: str, day: str) -> str:
    """``schedule-<graph>-<YYYYMMDD>``: one scheduled run of a graph a day (UTC), so a second
    scheduled job that day finds it and continues or refuses, never starts another."""
    name = slug(graph_name or "graph", MAX_RUN_ID - len(f"schedule--{day}"))
    return f"schedule-{name}-{day}"


def dispatched_run_id(graph_name: str, workflow_run: str) -> str:
    """``dispatch-<graph>-<workflow run id>``: a run a dispatch started without naming one."""
    name = slug(graph_name or "graph", MAX_RUN_ID - len(f"dispatch--{workflow_run}"))
    return f"dispatch-{name}-{workflow_run}"
