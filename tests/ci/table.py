"""A planner's facts as a table: each question answered from a value the test names, and every
question asked written down in order — a planner asks only what its path needs, as the job
would read it (a REST call, a fetch) in that order."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from omg.ci.context import LegArgs
from omg.ci.prgraph import Base, PrGraph
from omg.errors import Unreadable
from omg.github.client import PullHead
from omg.github.env import Actions
from omg.github.event import PullRequest
from omg.graph.build import graph_from_data
from omg.graph.model import Graph
from omg.leg.loop import LegOptions
from omg.leg.run import Run
from omg.state import State
from omg.state.fold import empty_state
from omg.state.store import RunDir

GRAPH = graph_from_data({"name": "g", "nodes": [{"id": "a", "run": "true"}]})  # type: ignore[typeddict-item]
HEAD = "h" * 40
BEFORE = "b" * 40
BASE = "c" * 40


def args(**given: Any) -> LegArgs:
    """The job's arguments: the action's defaults, and ``given``."""
    return LegArgs(
        **{
            "graph": Path("graphs/g.yaml"),
            "run_id": None,
            "limits": LegOptions(),
            "push": "origin",
            "runs_dir": Path(".omg/runs"),
            "inputs": {},
            **given,
        }
    )


def actions(**given: Any) -> Actions:
    """A job's GitHub context."""
    return Actions(
        **{
            "event_name": "pull_request",
            "event_path": None,
            "repository": "o/r",
            "api_url": "https://api.github.com",
            "server_url": "https://github.com",
            "actor": "ann",
            "run_id": "77",
            **given,
        }
    )


def state(rid: str = "r", **fields: Any) -> State:
    """A run's state: empty but for ``fields``."""
    st = empty_state()
    st["run_id"] = rid
    st.update(fields)  # type: ignore[typeddict-item]
    return st


def leg(outcome: str | None, reason: str | None = None, **more: Any) -> dict[str, Any]:
    """A leg record: how it ended (None: still open), why, and more."""
    return {"leg": 1, "outcome": outcome, "reason": reason, **more}


def rules(t: PullRequest, graph: Graph | None = GRAPH) -> PrGraph:
    """The graph the base of ``t`` holds (None: the PR adds it)."""
    base = Base(t.number, t.head_sha, t.base_sha, t.base_ref)
    added = {"files": ["graphs/g.yaml"], "errors": 0, "warnings": 0, "findings": []}
    change = None if graph is not None else added
    return PrGraph(Path("graphs/g.yaml"), base, graph, [], "s" * 64, change)  # type: ignore[arg-type]


@dataclass
class Table:
    """The answers, and the questions asked (in order)."""

    args: LegArgs = field(default_factory=args)
    gh: Actions = field(default_factory=actions)
    default_branch: str = "main"
    graph_file: tuple[Graph, Path] = (GRAPH, Path("graphs/g.yaml"))
    base_graph: Graph | None = GRAPH
    heads: dict[int, str] = field(default_factory=dict)
    forks: set[int] = field(default_factory=set)  # pull requests whose head lives in a fork
    closed: set[int] = field(default_factory=set)  # pull requests closed (or merged)
    not_writer: str | None = None  # why the commenter has no write access (None: they have)
    runs: dict[str, State] = field(default_factory=dict)  # on the remote
    refused: str | None = None
    refs: dict[str, tuple[str, int]] = field(default_factory=dict)
    moved: int = 0
    on_record: set[str] = field(default_factory=set)
    waiting: dict[str, bytes | Unreadable] = field(default_factory=dict)
    clock: datetime = datetime(2026, 3, 4, 12, 0, tzinfo=UTC)
    asked: list[str] = field(default_factory=list)

    def graph(self) -> tuple[Graph, Path]:
        self.asked.append("graph")
        return self.graph_file

    def pr_graph(self, t: PullRequest) -> PrGraph:
        self.asked.append("pr_graph")
        return rules(t, self.base_graph)

    def pr_head(self, number: int) -> str:
        self.asked.append(f"pr_head {number}")
        return self.heads[number]

    def pull(self, number: int) -> PullHead:
        self.asked.append(f"pull {number}")
        state = "closed" if number in self.closed else "open"
        return PullHead(self.heads[number], "feature", number in self.forks, BASE, "main", state)

    def pr_runs(self, number: int, graph_name: str) -> list[str]:
        self.asked.append(f"pr_runs {number}")
        return sorted(r for r in self.runs if r.startswith(f"pr-{number}-{graph_name}-"))

    def writer(self, login: str, *, bot: bool, association: str) -> str | None:
        self.asked.append(f"writer {login}")
        return self.not_writer

    def found(self, run_id: str) -> bool:
        self.asked.append(f"found {run_id}")
        return run_id in self.runs

    def run(self, run_id: str) -> Run:
        self.asked.append(f"run {run_id}")
        return Run(RunDir(Path("/nonexistent") / run_id), self.runs[run_id])

    def refusal(
        self, login: str, *, bot: bool, association: str | None, state: State
    ) -> str | None:
        self.asked.append(f"refusal {login}")
        return self.refused

    def state_at(self, run_id: str, ref: str) -> tuple[str, int] | None:
        self.asked.append(f"state_at {ref}")
        return self.refs.get(ref)

    def progress(self, run_id: str) -> int:
        self.asked.append("progress")
        return self.moved

    def recorded(self, run_id: str, event: str, command: str) -> bool:
        self.asked.append(f"recorded {event}")
        return command in self.on_record

    def waits(self) -> dict[str, bytes | Unreadable]:
        self.asked.append("waits")
        return self.waiting

    def now(self) -> datetime:
        return self.clock

    def workflow_run(self) -> str:
        return self.gh.run_id or "0"
