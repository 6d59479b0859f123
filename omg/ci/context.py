"""A job's context: its arguments, GitHub, the runs it touches, and what it has to say — one
frozen value every planner's reader, the actor and the report are handed (no base classes)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from omg.ci.jobruns import JobRuns
from omg.ci.report_md import Links
from omg.github.client import GitHub
from omg.github.env import Actions, api_backoff, git_tokens
from omg.graph.findings import Finding
from omg.mask import Masker
from omg.records import CiRun
from omg.state import State
from omg.state.events import EventFields

if TYPE_CHECKING:
    from omg.leg.loop import LegOptions

#: what a `schedule` event asks of `omg leg` (the action's `on-schedule` input)
OnSchedule = Literal["start", "continue"]
#: A line for the job's log (stderr), and a workflow command for the runner (stdout): the
#: printers `cli/` hands in, so only `cli/` prints.
Say = Callable[[str], None]


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
    #: the run job of a leg split in two: nothing is written to GitHub or the remote; the
    #: leg's commits and what it would publish are handed off into this directory
    hand_off: Path | None = None
    #: the fold of a wave handed off: the directory its entries' artifacts were downloaded
    #: into, one subdirectory each, named for its entry
    entries: Path | None = None


@dataclass(frozen=True)
class JobContext:
    """One job's process: its GitHub context and client, the runs it touches on the remote it
    pushes to, the printers it was handed, and what it gathered to say in its report."""

    gh: Actions
    args: LegArgs
    environ: Mapping[str, str]
    api: GitHub
    runs: JobRuns
    say: Say  # a line of the job's log
    annotate: Say  # a workflow command (an annotation) for the runner
    default_branch: str = ""  # the repository's, once a pull_request event named it
    #: one line of what else happened (a refusal, a supersede, a lost race), for the report
    notes: list[str] = field(default_factory=list)
    #: the lint advisories of the graph this job read, shown as annotations
    findings: list[Finding] = field(default_factory=list)
    #: what was said once this job (the commit status GitHub refused)
    said_once: set[str] = field(default_factory=set)
    #: the runs this job reported on, in order (the run job hands off the last)
    reported: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls, gh: Actions, args: LegArgs, environ: Mapping[str, str], say: Say, annotate: Say
    ) -> JobContext:
        """The context of a job running in ``gh`` with ``args``."""
        client: type[GitHub] = GitHub
        if args.hand_off is not None:  # the run job: what it would publish is recorded instead
            from omg.ci.publisher import Recorder

            client = Recorder
        api = client(
            gh.api_url,
            gh.repository,
            gh.token,
            backoff=api_backoff(environ),
            warn=say,
            mask=Masker.from_env(environ),
        )
        runs = JobRuns(args.runs_dir, args.push, args.inputs, git_tokens(environ), say)
        runs.hand_off = args.hand_off is not None
        return cls(gh, args, environ, api, runs, say, annotate)

    def stamp(self) -> EventFields:
        """What a leg of this job records of it (``run_started``/``leg_started``'s ``ci``)."""
        ci: CiRun = {"event": self.gh.event_name, "attempt": self.gh.run_attempt}
        if self.gh.run_id:
            ci["workflow_run_id"] = self.gh.run_id
        if self.gh.actor:
            ci["actor"] = self.gh.actor
        if self.gh.workflow_file:
            ci["workflow"] = self.gh.workflow_file
        return {"ci": ci}

    def links(self, rid: str) -> Links:
        """Where the report points: the run's branch and this workflow run."""
        repo = f"{self.gh.server_url}/{self.gh.repository}"
        return Links(self.gh.tree_url(f"omg/runs/{rid}"), self.gh.run_url, repo)

    def note(self, line: str) -> None:
        """Keep ``line`` for the report, and say it in the log."""
        self.notes.append(line)
        self.say(f"omg: {line}")

    def carrier(self, state: State) -> str:
        """The workflow run (or "another process") carrying the run's open last leg, when that
        is not this job's own workflow run — it may be running it now; '' when no such leg."""
        legs = state["legs"]
        if not legs or legs[-1]["outcome"] is not None:
            return ""
        carrier = legs[-1].get("ci", {}).get("workflow_run_id", "")
        if carrier and carrier == self.gh.run_id:
            return ""  # this job's own earlier attempt, cut short: its re-run continues it
        return f"workflow run {carrier}" if carrier else "another process"
