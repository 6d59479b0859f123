"""What one `omg leg` job tells GitHub: its outputs, the step summary, annotations, the sticky
comment and its reply, and the dispatch of the next leg when one is due."""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from omg.cli import exits
from omg.cli.report import (
    Links,
    Situation,
    addressee,
    annotation_lines,
    answer,
    comment,
    markdown,
    marker,
    not_run,
)
from omg.errors import GitHubForbidden
from omg.github import outputs
from omg.github.annotations import workflow_command
from omg.github.client import GitHub, Quiet
from omg.github.commitstatus import changing, context, describe
from omg.github.env import Actions
from omg.github.markdown import code
from omg.graph.findings import Finding
from omg.graph.workflows import DISPATCH_INPUT
from omg.leg.run import Run, open_run
from omg.mask import NOTHING, Masker
from omg.records import PullRequestRecord
from omg.state import State
from omg.state.events import EventFields, EventKind

if TYPE_CHECKING:  # the leg's machinery is imported when a leg runs, not to report one
    from omg.leg.prgraph import PrGraph
    from omg.leg.start import Environment, LegEnd


#: The least time between two replies to one login that may not decide, on one pull request.
QUIET = timedelta(minutes=10)


def say(message: str) -> None:
    print(message, file=sys.stderr)


def leg_elsewhere(state: State, job_run_id: str) -> str:
    """The workflow run (or "another process") carrying the run's open last leg, when that
    is not this job's own workflow run — it may be running it now; '' when no such leg."""
    legs = state["legs"]
    if not legs or legs[-1]["outcome"] is not None:
        return ""
    carrier = legs[-1].get("ci", {}).get("workflow_run_id", "")
    if carrier and carrier == job_run_id:
        return ""  # this job's own earlier attempt, cut short: its re-run continues it
    return f"workflow run {carrier}" if carrier else "another process"


def calls_table(calls: Mapping[str, int]) -> str:
    """The step summary's account of this job's GitHub REST calls, by endpoint (one line)."""
    each = ", ".join(f"`{what}` {n}" for what, n in sorted(calls.items()))
    return f"\nGitHub REST calls of this job: {sum(calls.values())}{': ' + each if each else ''}\n"


class Reporting(ABC):
    """The reporting half of a job; the job supplies the run's environment and its notes."""

    gh: Actions
    api: GitHub
    runs_dir: Path
    dispatch_workflow: str | None
    default_branch: str
    findings: list[Finding]
    notes: list[str]
    #: a commenter who may not decide: answered at most once every ``QUIET`` (``reply``)
    quiet: str = ""
    #: whether this job said that GitHub refused its commit status (said once)
    status_warned: bool = False

    @abstractmethod
    def environment(self, run_id: str, run: Run | None = None) -> Environment: ...

    @abstractmethod
    def note(
        self, rid: str, kind: EventKind, fields: EventFields, what: str, note_id: str
    ) -> bool: ...

    def situation(self, run: Run, end: LegEnd | None, env: Environment) -> Situation:
        from omg.leg.notes import progress_seq

        assert env.commits is not None
        rid, state = run.rundir.run_id, run.state
        ref = (
            env.commits.pause_ref(progress_seq(run.rundir)) or env.commits.repo.run_head(rid) or ""
        )
        head = state.get("pull_request", {}).get("head_sha", "")
        note = " ".join(self.notes)
        status = state["status"]
        if status == "paused" and state["paused_at"]:
            return Situation("paused", state["paused_at"], ref, head, "gate", note)
        reason = state["legs"][-1].get("reason") if state["legs"] else None
        if status == "paused" and reason in ("limit", "spend_cap"):
            # a limit, or a day's cap: the resume workflow's schedule continues it once the wait
            # is over; a pull request's cap waits for a writer's /omg approve-spend
            capped = state["legs"][-1].get("capped")
            waits = reason == "limit" or (capped is not None and capped["scope"] == "day")
            return Situation("paused", "", ref, head, "wait" if waits else "none", note)
        if status == "paused":
            return Situation("continuing", "", ref, head, "dispatch", note)
        if status == "running":  # a leg lost its race or was cut: the next leg picks it up
            return Situation("continuing", "", ref, head, "none", note)
        return Situation(status, "", ref, head, "none", note)

    def links(self, rid: str) -> Links:
        return Links(self.gh.tree_url(f"omg/runs/{rid}"), self.gh.run_url)

    def report_only(
        self, rid: str, number: int | None, reply: tuple[str, str] | None = None
    ) -> int:
        return self.finish(None, number=number, rid=rid, reply=reply)

    def finish(
        self,
        end: LegEnd | None,
        *,
        number: int | None,
        rid: str | None = None,
        reply: tuple[str, str] | None = None,
    ) -> int:
        """Outputs, summary, annotations and the sticky comment; then the next leg, if due."""
        from omg.leg.start import leg_mask

        run_id = end.run_id if end is not None else rid
        if run_id is None:  # a leg that lost its race before the run existed anywhere
            return self.skip(" ".join(self.notes) or "nothing ran", quiet=False)
        run = open_run(self.runs_dir, run_id)  # as the leg left it, with what was noted since
        state, rundir = run.state, run.rundir
        graph = end.graph if end is not None else run.graph
        events = list(rundir.read_events())
        env = self.environment(run_id, run)
        mask = leg_mask(env, graph)  # the record is masked; this is GitHub's
        sit = self.situation(run, end, env)
        values = {
            "status": sit.status,
            "run-id": run_id,
            "gate": sit.gate,
            "next": sit.next,
            "cost-usd": f"{state['cost_usd']:.4f}",
            "state-ref": sit.state_ref,
        }
        idle = end is None or end.result is None  # this job ran no leg: it only reports
        try:
            if sit.next == "dispatch" and idle:
                values["next"] = "none"  # a report (a /omg status): the leg that paused sent it
            elif sit.next == "dispatch":
                values["next"] = self.dispatch(run_id, leg=len(state["legs"]))
                sit = Situation(
                    sit.status, sit.gate, sit.state_ref, sit.head_sha, values["next"], sit.note
                )
                run = open_run(self.runs_dir, run_id)  # the dispatch was noted: it moved on
                state, events = run.state, list(rundir.read_events())
            commands, cut = annotation_lines(graph, state, state["graph_source"], self.findings)
            for line in commands:
                print(mask.text(line))
            links = self.links(run_id)
            outputs.write_summary(
                self.gh.summary,
                markdown(graph, state, events, sit, links, rows=1000, extra=cut),
                mask=mask,
            )
            # The PR's comment is left to the newer head's run when this run is superseded,
            # and to the leg running now when this job ran none (a /omg status, a refusal):
            # a report made meanwhile could land after that leg's own and show a stale state.
            running = leg_elsewhere(state, self.gh.run_id) if idle else ""
            if number is not None and state["status"] != "superseded" and not running:
                body = comment(graph, state, events, sit, links, number)
                self.api.upsert_comment(number, marker(number, graph.name), mask.text(body))
            # The judged head's status, whichever branch this leg ran on (a dispatched or
            # comment leg's own check never reaches the PR); left to a leg running now.
            pr = state.get("pull_request")
            if pr is not None and not running:
                self.show_status(pr["head_sha"], graph.name, sit, leg=len(state["legs"]), pr=pr)
            if number is not None and reply is not None:
                key, login = reply
                said = (
                    f"a leg is running ({running}); the omg comment is updated when it ends"
                    if running
                    else f"{sit.status}; the omg comment above has the details"
                )
                self.reply(number, key, login, f"run {code(run_id)}: {said}.", mask)
        finally:
            outputs.write_outputs(self.gh.output, values, mask=mask)
            outputs.write_summary(self.gh.summary, calls_table(self.api.calls))
        say(f"omg: run {run_id}: {values['status']} (next: {values['next']})")
        return exits.FAILED if sit.status == "failed" else exits.PASSED

    def reply(
        self, number: int, key: str, login: str, said: str, mask: Masker = NOTHING
    ) -> bool:
        """Answer a comment once (``key`` finds the answer again) — and a login that may not
        decide (``quiet``) at most once every ``QUIET`` on the pull request, so a burst of its
        comments costs one reply: the rest are logged, not answered (False)."""
        quiet = None
        if login == self.quiet:
            quiet = Quiet(addressee(login), datetime.now(UTC) - QUIET)
        body = mask.text(answer(key, login, said))
        if self.api.post_once(number, key, body, quiet=quiet) is not None:
            return True
        minutes = int(QUIET.total_seconds() // 60)
        self.notes.append(f"{login} was answered in the last {minutes} minutes; not again now")
        say(f"omg: {self.notes[-1]}")
        return False

    def show_status(
        self,
        head: str,
        graph_name: str,
        sit: Situation,
        *,
        leg: int = 0,
        pr: PullRequestRecord | None = None,
    ) -> None:
        """Set ``omg/<graph>`` on the judged head to what ``sit`` says, linking this leg's run;
        ``pr``: the run's record of the PR (a change to its graph is said first)."""
        note = ""
        if sit.status == "superseded":
            note = "a newer head of the pull request is judged by a run of its own"
        state, description = describe(
            sit.status, gate=sit.gate, ref=sit.state_ref, leg=leg, note=note
        )
        if pr is not None and "graph_change" in pr and sit.status != "superseded":
            description = changing(description)
        try:
            self.api.set_status(head, context(graph_name), state, description, self.gh.run_url)
        except GitHubForbidden as exc:  # a workflow without `statuses: write`: a warning
            if not self.status_warned:
                self.status_warned = True
                self.warn_no_status(context(graph_name), str(exc))

    def warn_no_status(self, name: str, refused: str) -> None:
        """Say once — log, annotation, step summary — that the status was refused and which
        permission the workflow's job needs; the leg goes on without a status."""
        what = (
            f"the commit status {name} was not set: {refused}. The leg goes on without it; "
            "add `statuses: write` to the job's `permissions:` in the workflow to show the run's "
            "state on the pull request's head"
        )
        say(f"omg: warning: {what}")
        print(workflow_command("warning", what, {"title": f"omg: no {name} status"}))
        outputs.write_summary(
            self.gh.summary,
            f"\n> ⚠️ The commit status {code(name)} was not set: GitHub answered "
            f"{code(refused)}. Add `statuses: write` to the job's `permissions:` in the "
            "workflow; the leg went on without it.\n",
        )

    def dispatch(self, rid: str, leg: int) -> str:
        """Start the next leg with workflow_dispatch (a GITHUB_TOKEN push starts no workflow).

        It runs on the branch this workflow came from, or on the default branch when that is a
        pull request's merge ref: the same trusted workflow file a comment leg runs.
        ``leg``: the leg that sends it (names the note of the dispatch).
        """
        workflow = self.dispatch_workflow or self.gh.workflow_file
        ref = self.gh.workflow_branch or self.default_branch
        if not workflow or not ref:
            self.notes.append(
                "the leg budget ran out with work left, but the workflow file or branch is "
                "unknown, so no next leg was dispatched; dispatch it with run-id " + rid
            )
            return "none"
        sent = self.api.dispatch(workflow, ref, {DISPATCH_INPUT: rid}, title=rid)
        fields: EventFields = {}
        if sent.get("workflow_run_id"):
            fields["workflow_run_id"] = sent["workflow_run_id"]
        if sent.get("url"):
            fields["url"] = sent["url"]
        self.note(
            rid, "leg_dispatched", fields, f"dispatched {workflow} on {ref}", f"dispatched-leg{leg}"
        )
        return "dispatch"

    def graph_not_run(self, number: int, rules: PrGraph) -> int:
        """A pull request that adds the graph its workflow names: its base has none, so nothing
        runs and no status is set; the sticky comment and the summary say so, with the new
        graph's lint."""
        assert rules.change is not None
        name = rules.head_name or str(rules.source)
        b = rules.base
        body = not_run(name, rules.change, b.base_ref, b.base_sha)
        self.api.upsert_comment(number, marker(number, name), f"{marker(number, name)}\n{body}")
        say(f"omg: PR #{number} adds {rules.source}: reported, not run (it applies once merged)")
        outputs.write_summary(self.gh.summary, body)
        return self.skip("")

    def skip(self, why: str, *, quiet: bool = True) -> int:
        """Nothing to run: say why (unless ``quiet``), push nothing, exit 0."""
        if not quiet:
            say(f"omg: {why}")
            outputs.write_summary(self.gh.summary, f"### omg · nothing to run\n\n{code(why)}\n")
        outputs.write_outputs(
            self.gh.output,
            {
                "status": "skipped",
                "run-id": "",
                "gate": "",
                "next": "none",
                "cost-usd": "0.0000",
                "state-ref": "",
            },
        )
        return exits.PASSED
