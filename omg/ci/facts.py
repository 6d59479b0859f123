"""What a planner may ask before it decides: the questions, each answered by `ci/look` when
asked (so a planner asks only what its path needs, in the order a person would look), or by
a table in a test."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from omg.errors import Unreadable
from omg.github.env import Actions
from omg.github.event import PullRequest

if TYPE_CHECKING:
    from omg.ci.context import LegArgs
    from omg.ci.prgraph import PrGraph
    from omg.github.client import PullHead
    from omg.graph.model import Graph
    from omg.leg.run import Run
    from omg.state import State


class Facts(Protocol):
    """The job's arguments and GitHub context, and the questions about its world."""

    @property
    def args(self) -> LegArgs: ...

    @property
    def gh(self) -> Actions: ...

    @property
    def default_branch(self) -> str: ...

    def graph(self) -> tuple[Graph, Path]:
        """The workflow's graph file, loaded and checked (refused when invalid)."""
        ...

    def pr_graph(self, t: PullRequest) -> PrGraph:
        """The graph as the commit a pull request targets has it, and the PR's change to it."""
        ...

    def pr_head(self, number: int) -> str:
        """The head commit pull request ``number`` is at now."""
        ...

    def pull(self, number: int) -> PullHead:
        """Pull request ``number`` as GitHub has it now: its head, its base, fork or not."""
        ...

    def pr_runs(self, number: int, graph_name: str) -> list[str]:
        """The runs the remote holds of pull request ``number`` and graph ``graph_name``."""
        ...

    def writer(self, login: str, *, bot: bool, association: str) -> str | None:
        """Why ``login`` has no write access to the repository (None when they have)."""
        ...

    def found(self, run_id: str) -> bool:
        """Whether the remote has run ``run_id`` (fetched and verified when it has)."""
        ...

    def run(self, run_id: str) -> Run:
        """Run ``run_id`` as it stands here (after ``found``)."""
        ...

    def refusal(
        self, login: str, *, bot: bool, association: str | None, state: State
    ) -> str | None:
        """Why ``login`` may not decide on the run in ``state`` (None when they may)."""
        ...

    def state_at(self, run_id: str, ref: str) -> tuple[str, int] | None:
        """The run id and seq of the state commit ``ref`` names, if it is one of omg's."""
        ...

    def progress(self, run_id: str) -> int:
        """The seq of the run's last event that moved it."""
        ...

    def recorded(self, run_id: str, event: str, command: str) -> bool:
        """Whether the run's record holds an ``event`` for ``command`` already."""
        ...

    def waits(self) -> dict[str, bytes | Unreadable]:
        """Every run the remote records as waiting: run id → its ``wait.json``."""
        ...

    def now(self) -> datetime:
        """The time now (UTC)."""
        ...

    def workflow_run(self) -> str:
        """This workflow run's id (outside Actions, a number of this instant)."""
        ...
