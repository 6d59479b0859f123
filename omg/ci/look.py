"""The answers to a planner's questions (`ci/facts`), read from the job's world when asked: the
graph file, a pull request's base graph and head, the runs on the remote, who may decide."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from omg.errors import Unreadable, UsageError
from omg.github.access import refusal
from omg.github.env import Actions
from omg.github.event import PullRequest
from omg.leg.run import Run, open_run
from omg.state import State
from omg.state.store import RunDir

if TYPE_CHECKING:
    from omg.ci.context import JobContext, LegArgs
    from omg.ci.prgraph import PrGraph
    from omg.github.client import PullHead
    from omg.graph.model import Graph


class Look:
    """The facts of one job, read from ``ctx``'s checkout, remote and GitHub when asked. A run
    is opened once and kept until ``refetch`` (another leg moved it); the graph file's lint
    advisories are kept in the context for the report."""

    def __init__(self, ctx: JobContext) -> None:
        self.ctx = ctx
        self._runs: dict[str, Run] = {}

    @property
    def args(self) -> LegArgs:
        return self.ctx.args

    @property
    def gh(self) -> Actions:
        return self.ctx.gh

    @property
    def default_branch(self) -> str:
        return self.ctx.default_branch

    def graph_path(self) -> Path:
        if self.args.graph is None:
            raise UsageError(
                f"a {self.gh.event_name} leg needs the graph: pass --graph PATH or set OMG_GRAPH "
                "(the action's `graph` input)"
            )
        return self.args.graph

    def graph(self) -> tuple[Graph, Path]:
        from omg.graph.load import check_file, load_graph

        path = self.graph_path()
        graph, found = check_file(path)
        if graph is None:
            load_graph(path)  # raises the refusal that lists every error
            raise AssertionError("unreachable: an invalid graph is refused")
        self.ctx.findings[:] = [f for f in found if f.severity != "error"]
        return graph, path

    def pr_graph(self, t: PullRequest) -> PrGraph:
        from omg.ci.prgraph import Base

        found = self.ctx.runs.pr_graph(
            Base(t.number, t.head_sha, t.base_sha, t.base_ref), self.graph_path()
        )
        self.ctx.findings[:] = found.findings
        return found

    def pr_head(self, number: int) -> str:
        return self.ctx.api.pull(number).head_sha

    def pull(self, number: int) -> PullHead:
        return self.ctx.api.pull(number)

    def pr_runs(self, number: int, graph_name: str) -> list[str]:
        return self.ctx.runs.pr_runs(number, graph_name)

    def writer(self, login: str, *, bot: bool, association: str) -> str | None:
        return refusal(
            login,
            bot=bot,
            association=association,
            approvers=(),  # a graph's approvers decide its gates; a review needs write access
            permission=self.ctx.api.permission,  # the payload's association is never enough
            needs="starting a review",
        )

    def found(self, run_id: str) -> bool:
        return self.ctx.runs.fetch(run_id)

    def refetch(self, run_id: str) -> None:
        """Run ``run_id`` fetched anew, replacing this clone's (another leg moved it first)."""
        self._runs.pop(run_id, None)
        self.ctx.runs.fetch(run_id, replace=True)

    def run(self, run_id: str) -> Run:
        if run_id not in self._runs:
            self._runs[run_id] = open_run(self.args.runs_dir, run_id)
        return self._runs[run_id]

    def approvers(self, state: State) -> tuple[str, ...]:
        """Who may decide on the run: the checkout's graph file (this job's branch, as it is
        now), or — for a PR into another branch, or a graph renamed since — the run's snapshot,
        which is its base's graph; never a file of the PR."""
        base = state.get("pull_request", {}).get("base_ref", "")
        if base and base != (self.gh.workflow_branch or self.default_branch):
            return tuple(state["graph"].get("approvers") or ())
        if self.args.graph is not None and self.args.graph.is_file():
            graph, _ = self.graph()
            if graph.name == state["graph"].get("name"):
                return graph.approvers
        return tuple(state["graph"].get("approvers") or ())

    def refusal(
        self, login: str, *, bot: bool, association: str | None, state: State
    ) -> str | None:
        return refusal(
            login,
            bot=bot,
            association=association,
            approvers=self.approvers(state),  # not the PR's
            permission=self.ctx.api.permission,
        )

    def state_at(self, run_id: str, ref: str) -> tuple[str, int] | None:
        commits = self.ctx.runs.environment(run_id).commits
        assert commits is not None
        return commits.state_seq(ref)

    def progress(self, run_id: str) -> int:
        from omg.leg.notes import progress_seq

        return progress_seq(RunDir(self.args.runs_dir / run_id))

    def recorded(self, run_id: str, event: str, command: str) -> bool:
        rundir = RunDir(self.args.runs_dir / run_id)
        return any(
            ev["event"] == event and ev.get("command") == command for ev in rundir.read_events()
        )

    def waits(self) -> dict[str, bytes | Unreadable]:
        return self.ctx.runs.waits()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def workflow_run(self) -> str:
        return self.gh.run_id or str(time.time_ns())
