"""A CI job of omg: its arguments, the runs it touches, and the pieces every kind of job
(`omg leg`, and a fan-out wave's `omg leg --node` / `--fold`) shares."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from omg.cli.leg_report import Reporting, say
from omg.errors import MovedOn
from omg.github.client import GitHub
from omg.github.env import Actions, api_backoff, git_tokens
from omg.graph.findings import Finding
from omg.leg.jobruns import JobRuns
from omg.leg.loop import LegOptions
from omg.mask import Masker
from omg.records import CiRun
from omg.state.events import EventFields, EventKind

if TYPE_CHECKING:
    from omg.leg.run import Run
    from omg.leg.start import Environment, LegEnd


#: what a `schedule` event asks of `omg leg` (the action's `on-schedule` input)
OnSchedule = Literal["start", "continue"]


@dataclass(frozen=True)
class LegArgs:
    graph: Path | None
    run_id: str | None
    limits: LegOptions  # --max-minutes, --max-nodes: the options of every leg this job runs
    push: str
    runs_dir: Path
    inputs: Mapping[str, str]
    dispatch_workflow: str | None = None
    node: str | None = None  # a fan-out matrix job: run this entry of the wave
    fold: bool = False  # the job after the matrix: fold the wave's records in
    base: str | None = None  # the run-branch commit the wave was planned at
    max_jobs: int | None = None  # the plan's --max-jobs (the fold re-plans with it)
    #: what a `schedule` event does: start today's run of the graph, or continue waiting runs
    on_schedule: OnSchedule = "continue"


R = TypeVar("R")


@dataclass(frozen=True)
class Lost:
    """A try that lost its race: another leg advanced the run first."""


class CiJob(Reporting):
    """One job's process: the runs it touches, on the remote it pushes to, and GitHub."""

    def __init__(self, gh: Actions, args: LegArgs, environ: Mapping[str, str]) -> None:
        self.gh = gh
        self.args = args
        self.runs_dir = args.runs_dir
        self.dispatch_workflow = args.dispatch_workflow
        self.environ = environ
        self.api = GitHub(
            gh.api_url,
            gh.repository,
            gh.token,
            backoff=api_backoff(environ),
            warn=say,
            mask=Masker.from_env(environ),
        )
        self.runs = JobRuns(args.runs_dir, args.push, args.inputs, git_tokens(environ), say)
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.default_branch = ""

    def environment(self, run_id: str, run: Run | None = None) -> Environment:
        return self.runs.environment(run_id, run)

    def fetch(self, run_id: str, *, replace: bool = False) -> bool:
        return self.runs.fetch(run_id, replace=replace)

    def note(self, rid: str, kind: EventKind, fields: EventFields, what: str, note_id: str) -> bool:
        return self.runs.note(rid, kind, fields, what, note_id)

    def stamp(self) -> EventFields:
        ci: CiRun = {"event": self.gh.event_name, "attempt": self.gh.run_attempt}
        if self.gh.run_id:
            ci["workflow_run_id"] = self.gh.run_id
        if self.gh.actor:
            ci["actor"] = self.gh.actor
        if self.gh.workflow_file:
            ci["workflow"] = self.gh.workflow_file
        return {"ci": ci}

    def lost(self, rid: str, why: MovedOn) -> None:
        """Another leg of this run won the compare-and-swap: this one ends, having spent nothing."""
        self.notes.append(f"another leg advanced run {rid} first; this leg ran nothing ({why})")
        say(f"omg: {self.notes[-1]}")
        self.fetch(rid, replace=True)  # report what the winner recorded

    def run_and_finish(self, act: Callable[[], LegEnd | None], number: int) -> int:
        return self.finish(act(), number=number)

    def settle(self, rid: str, act: Callable[[], R], again: str = "") -> R | Lost:
        """``act()``, or Lost when another leg advanced run ``rid`` first (MovedOn): the run
        is then fetched anew (after saying ``again``) for the caller to judge again."""
        try:
            return act()
        except MovedOn:
            if again:
                say(again)
            self.fetch(rid, replace=True)
            return Lost()
