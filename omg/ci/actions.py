"""What a job does, as values: the closed set a planner returns and `ci/act` carries out — so
deciding what GitHub should be told is a value, and telling it is `act`'s alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from omg.ci.prgraph import PrGraph
    from omg.github.command import Command
    from omg.graph.model import Graph
    from omg.leg.decisions import Decision, Guidance
    from omg.records import PullRequestRecord


@dataclass(frozen=True)
class To:
    """Whom a reply answers: the comment on pull request ``number``, and its author — one who
    may not decide (``quiet``) is answered at most once every ``reporting.QUIET``."""

    number: int
    comment_id: int
    login: str
    quiet: bool = False

    @property
    def key(self) -> str:
        """The hidden line that finds the answer again (a re-run of the job answers nothing
        twice)."""
        return f"<!-- omg:reply={self.comment_id} -->"


@dataclass(frozen=True)
class Skip:
    """Nothing to run: said (unless ``quiet``) in the log and the step summary."""

    why: str
    quiet: bool = True


@dataclass(frozen=True)
class Reply:
    """Answer a comment with ``text``, then end as ``then``."""

    to: To
    text: str
    then: Skip


@dataclass(frozen=True)
class NotRun:
    """A pull request that adds the graph its workflow names: reported with its lint, not run."""

    number: int
    rules: PrGraph


@dataclass(frozen=True)
class ReportOnly:
    """Report run ``run_id`` as it stands (``note`` first, when given); answer ``to`` with how
    it stands."""

    run_id: str
    number: int | None
    to: To | None = None
    note: str = ""


@dataclass(frozen=True)
class Start:
    """A new run's first leg; ``pr``: the pull request head it judges (None: a dispatch's or a
    schedule's run, reported in the step summary only); ``sha256``: of the graph file as it was
    read (a PR's base), when not the file on disk."""

    graph: Graph
    source: Path
    run_id: str
    pr: PullRequestRecord | None = None
    sha256: str | None = None

    @property
    def number(self) -> int | None:
        return self.pr["number"] if self.pr is not None else None


@dataclass(frozen=True)
class Resume:
    """The run's next leg: deciding a gate, retrying failed nodes (with a person's words), or
    going on. ``quiet_if_paused``: a run waiting at a gate runs nothing and says nothing;
    ``contest``: a lost race is planned again (`act`'s race loop), not reported as lost."""

    run_id: str
    number: int | None
    decision: Decision | None = None
    retry: bool = False
    guidance: Guidance | None = None
    quiet_if_paused: bool = False
    contest: bool = False


@dataclass(frozen=True)
class ApproveSpend:
    """``usd`` more for the run beyond the spend caps, approved by ``by`` with ``command`` (the
    line and its comment, as the record keeps it), and the next leg under it."""

    run_id: str
    number: int
    usd: float
    by: str
    command: str


@dataclass(frozen=True)
class Refuse:
    """A `/omg` command that changes nothing but the record of its refusal, and its answer."""

    run_id: str
    to: To
    command: Command
    why: str


@dataclass(frozen=True)
class RefuseDecision:
    """A dispatched gate decision by someone who may not decide: recorded, and the job refuses."""

    run_id: str
    gate: str
    verdict: str
    by: str
    why: str


@dataclass(frozen=True)
class Apply:
    """A `/omg` command that may change run ``run_id``: judged on the run as it stands (by
    ``comment.decide``), and judged again when another leg moved the run first.
    ``refused``: why its author may not decide (None when they may)."""

    run_id: str
    to: To
    command: Command
    refused: str | None


@dataclass(frozen=True)
class Leg:
    """A pull request head's leg: run ``run_id`` resumed when the remote has it (refused when it
    judges another head than ``head``), else started as ``start``."""

    run_id: str
    head: str
    start: Start


@dataclass(frozen=True)
class Supersede:
    """Run ``run_id`` of an earlier head stops counting (the pull request moved to ``head``);
    then ``then``."""

    run_id: str
    head: str
    then: Action


@dataclass(frozen=True)
class ContinueWaits:
    """Continue each run in ``due``, one after the other (a schedule's job); name the
    ``damaged`` waits (run id, why) and skip them; ``waiting``: how many the remote records."""

    due: tuple[str, ...]
    damaged: tuple[tuple[str, str], ...]
    waiting: int


@dataclass(frozen=True)
class DropWait:
    """Run ``run_id`` waits for nothing any more: clear its wait, saying ``why``."""

    run_id: str
    why: str


@dataclass(frozen=True)
class RunEntry:
    """A fan-out matrix job: entry ``node`` of the wave, its record published for the fold."""

    run_id: str
    node: str


@dataclass(frozen=True)
class Fold:
    """The job after a fan-out matrix: the wave's records folded into run ``run_id``."""

    run_id: str


#: Everything a planner may return.
Action = (
    Skip
    | Reply
    | NotRun
    | ReportOnly
    | Start
    | Resume
    | ApproveSpend
    | Refuse
    | RefuseDecision
    | Apply
    | Leg
    | Supersede
    | ContinueWaits
    | DropWait
    | RunEntry
    | Fold
)
