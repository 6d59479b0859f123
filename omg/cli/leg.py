"""`omg leg`: one GitHub Actions job — read the event, decide what it asks, run one leg, report.

- ``pull_request`` (opened, synchronize, reopened, ready_for_review): start or continue the run
  of the PR's head; a new head supersedes the previous head's run.
- ``issue_comment`` ``/omg approve|reject|retry|status|approve-spend`` on a PR: check who wrote
  it and the state it names, then decide, retry, approve more spend or report.
- ``workflow_dispatch`` (``run-id``, ``gate``, ``decision``, ``reason``): continue or decide;
  with ``graph`` (and no run-id, or one not on the remote yet): start a new run on its ref.
- ``schedule``: with ``--on-schedule start``, today's run of the graph
  (``schedule-<graph>-<YYYYMMDD>``), started once a day; otherwise (``continue``, the default)
  continue the runs whose wait is over (a provider's limit, a day's spend cap).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from omg.cli.job import CiJob, LegArgs, Lost
from omg.cli.leg_report import leg_elsewhere, say
from omg.cli.report import Situation
from omg.errors import MovedOn, OmgError, RunFailed, StateError, UsageError
from omg.github.access import MAY_WRITE, refusal
from omg.github.command import Command, Malformed, parse
from omg.github.env import actions
from omg.github.event import PR_ACTIONS, Comment, Dispatch, PullRequest, Schedule, read_trigger
from omg.github.markdown import code
from omg.words import excerpt, visible
from omg.graph.model import Graph
from omg.leg.admit import AlreadyApplied, Refuse, admit
from omg.leg.decisions import Decision, Guidance
from omg.leg.run import Run, dated_run_id, dispatched_run_id, open_run, pr_run_id
from omg.records import PullRequestRecord
from omg.state import State
from omg.state.events import EventFields
from omg.state.store import RunDir

if TYPE_CHECKING:
    from omg.leg.prgraph import PrGraph
    from omg.leg.start import Environment, LegEnd


#: How often a comment's decision is judged again after another leg moved the run first.
RACE_TRIES = 3


def progress_interval(environ: Mapping[str, str]) -> float:
    """``OMG_PROGRESS_SECONDS``: the least time between two live updates (default 20)."""
    from omg.leg.pace import INTERVAL

    raw = environ.get("OMG_PROGRESS_SECONDS", "").strip()
    if not raw:
        return INTERVAL
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise UsageError(
            f"OMG_PROGRESS_SECONDS={raw!r} is not a number of seconds; unset it for the default "
            f"of {INTERVAL:.0f}"
        ) from None


def leg(args: LegArgs, environ: Mapping[str, str]) -> int:
    gh = actions(environ)
    return Job(gh, args, environ).handle()


class Job(CiJob):
    """One `omg leg` process: the event, the runs it touches, and what it tells GitHub."""

    # -- dispatch on the event -----------------------------------------------------------

    def handle(self) -> int:
        trigger = read_trigger(self.gh.event_name, self.gh.event_path)
        if isinstance(trigger, PullRequest):
            return self.on_pull_request(trigger)
        if isinstance(trigger, Comment):
            return self.on_comment(trigger)
        if isinstance(trigger, Dispatch):
            return self.on_dispatch(trigger)
        if isinstance(trigger, Schedule):
            if self.args.on_schedule == "start":
                return self.on_schedule(trigger)
            return self.on_schedule_waits()
        return self.skip(f"omg has nothing to do on a {trigger.name} event", quiet=False)

    def on_pull_request(self, t: PullRequest) -> int:
        self.default_branch = t.default_branch
        if t.action not in PR_ACTIONS:
            return self.skip(f"pull_request {t.action}: omg runs on {', '.join(PR_ACTIONS)}")
        if t.fork:
            return self.skip(
                f"PR #{t.number} comes from a fork: its workflow token is read-only and "
                "secrets are withheld, so omg cannot record or push a run for it. A maintainer "
                "can review the change and run the graph from a branch of this repository",
                quiet=False,
            )
        if t.draft and t.action != "ready_for_review":
            return self.skip(f"PR #{t.number} is a draft; omg starts when it is ready for review")
        rules = self.pr_graph(t)  # the base's graph judges the PR; its own change is reported
        if rules.graph is None:
            return self.graph_not_run(t.number, rules)
        graph, source = rules.graph, rules.source
        rid = self.args.run_id or pr_run_id(t.number, graph.name, t.head_sha)
        if t.before and t.before != t.head_sha and not self.args.run_id:
            self.supersede(pr_run_id(t.number, graph.name, t.before), t.head_sha)
        exists = self.fetch(rid)
        if exists:
            run = open_run(self.args.runs_dir, rid)
            judged = run.state.get("pull_request", {}).get("head_sha")
            if judged and judged != t.head_sha:
                raise StateError(
                    f"run {rid!r} judges head {judged[:12]}, but PR #{t.number} is at "
                    f"{t.head_sha[:12]}; leave --run-id unset so each head gets its own run"
                )
            end = self.resume(rid, run=run)
        else:
            end = self.start(graph, source, rid, rules.record(), sha256=rules.sha256)
        return self.finish(end, number=t.number)

    def on_comment(self, t: Comment) -> int:
        cmd = parse(t.body) if t.action == "created" and t.on_pull_request else None
        if cmd is None:
            return self.skip("the comment is not an omg command", quiet=True)
        reply_key = f"<!-- omg:reply={t.comment_id} -->"
        if t.bot or t.association not in MAY_WRITE:  # may not decide: answered sparingly
            self.quiet = t.login
        if isinstance(cmd, Malformed):
            self.reply(t.number, reply_key, t.login, f"{cmd.problem}.")
            return self.skip(f"comment {t.comment_id}: {cmd.problem}", quiet=False)
        graph, _ = self.graph_file()
        head = self.api.pull(t.number)
        rid = pr_run_id(t.number, graph.name, head.head_sha)
        if not self.fetch(rid):
            self.reply(
                t.number,
                reply_key,
                t.login,
                f"there is no omg run of {code(graph.name)} for head {code(head.head_sha[:7])}"
                " yet; it starts with the next push or reopen of the PR.",
            )
            return self.skip(f"no run {rid!r} on {self.args.push}", quiet=False)
        if cmd.verb == "status":
            return self.report_only(rid, t.number, reply=(reply_key, t.login))
        why = refusal(
            t.login,
            bot=t.bot,
            association=t.association,
            approvers=self.approvers(open_run(self.args.runs_dir, rid).state),  # not the PR's
            permission=self.api.permission,
        )
        if why is not None:
            self.quiet = t.login
        from omg.leg.notes import progress_seq

        rundir = RunDir(self.args.runs_dir / rid)
        for _ in range(RACE_TRIES):  # a decision that lost a race is judged again, not dropped
            run = open_run(self.args.runs_dir, rid)
            state = run.state
            verdict = admit(
                state,
                cmd,
                t.login,
                refused=why,
                busy=self.running_elsewhere(rid, state),
                state_at=lambda ref: self.state_at(rid, ref),
                progress=lambda: progress_seq(rundir),
            )
            if isinstance(verdict, Refuse):
                return self.refuse(rid, t.number, t.comment_id, t.login, cmd, verdict.why)
            unfit = Guidance(cmd.guidance, t.login).problem() if cmd.guidance else ""
            if unfit:  # words no node may be given: answered, and nothing runs
                return self.refuse(rid, t.number, t.comment_id, t.login, cmd, unfit)
            if isinstance(verdict, AlreadyApplied) and verdict.busy:
                # on record, and a leg carries it on: that leg is left alone
                self.notes.append(f"{cmd.text!r} is on record and a leg of run {rid} is running")
                return self.report_only(rid, t.number)
            again = f"omg: run {rid} moved on while deciding; judging {cmd.text!r} again"
            if cmd.verb == "approve-spend":
                written = f"{cmd.text} (comment {t.comment_id})"
                if any(
                    ev["event"] == "run_started" and ev.get("command") == written
                    for ev in rundir.read_events()
                ):  # a re-run of the job that recorded it: never approved twice
                    self.notes.append(f"{cmd.text!r} is on record")
                    return self.report_only(rid, t.number)
                approval: EventFields = {
                    "approved_usd": cmd.amount,
                    "by": t.login,
                    "command": written,
                }
                act = partial(self.resume, rid, run=run, contest=True, stamp=approval)
            elif isinstance(verdict, AlreadyApplied):
                act = partial(self.resume, rid, run=run, quiet_if_paused=True)
            elif verdict.decision is None:
                words = Guidance(cmd.guidance, t.login) if cmd.guidance else None
                act = partial(
                    self.resume, rid, run=run, retry_failed=True, contest=True, guidance=words
                )
            else:
                act = partial(self.resume, rid, run=run, decision=verdict.decision, contest=True)
            done = self.settle(rid, partial(self.run_and_finish, act, t.number), again)
            if not isinstance(done, Lost):
                return done
        self.notes.append(f"run {rid} kept moving; {cmd.text!r} was not applied, comment again")
        return self.report_only(rid, t.number)

    def on_schedule(self, t: Schedule) -> int:
        """A scheduled job: today's run of the workflow's graph (UTC), started once a day; a
        second job that day continues it when it has work left, else says it ran."""
        graph, source = self.graph_file()
        day = datetime.now(UTC).strftime("%Y%m%d")
        rid = self.args.run_id or dated_run_id(graph.name, day)
        if self.fetch(rid):
            state = open_run(self.args.runs_dir, rid).state
            if state["status"] in ("passed", "failed", "superseded") or state["paused_at"]:
                where = f"paused at gate {state['paused_at']}" if state["paused_at"] else ""
                return self.skip(
                    f"today's scheduled run {rid} is {where or state['status']} already; the "
                    "schedule starts no second run of the day (dispatch one with a run id to "
                    "run again)",
                    quiet=False,
                )
            return self.finish(self.resume(rid), number=None)
        return self.finish(self.start(graph, source, rid, None), number=None)

    def on_dispatch(self, t: Dispatch) -> int:
        rid = t.inputs.get("run-id") or self.args.run_id
        graph_path = t.inputs.get("graph", "").strip()
        if graph_path:
            self.args = replace(self.args, graph=Path(graph_path))
        if (not rid or not self.fetch(rid)) and graph_path:
            graph, source = self.graph_file()  # a new run of the graph, on the dispatched ref
            rid = rid or dispatched_run_id(graph.name, self.gh.run_id or str(time.time_ns()))
            return self.finish(self.start(graph, source, rid, None), number=None)
        if not rid:
            raise UsageError(
                "workflow_dispatch needs the run-id input (or --run-id / OMG_RUN_ID): "
                "which run to continue — or the graph input, to start a new run"
            )
        if not self.fetch(rid):
            raise StateError(
                f"{self.args.push} has no run {rid!r}; `git ls-remote {self.args.push} "
                "'refs/heads/omg/runs/*'` lists the runs there"
            )
        run = open_run(self.args.runs_dir, rid)
        state = run.state
        pr = state.get("pull_request")
        if pr is not None and state["status"] != "superseded":
            head = self.api.pull(pr["number"])
            if head.head_sha != pr["head_sha"]:
                self.supersede(rid, head.head_sha)
                return self.report_only(rid, pr["number"])
        gate, verdict = t.inputs.get("gate", ""), t.inputs.get("decision", "").lower()
        if verdict and verdict not in ("approve", "reject"):
            raise UsageError(f"decision input {verdict!r} must be approve or reject")
        if bool(gate) != bool(verdict):
            raise UsageError("the gate and decision inputs go together: name both or neither")
        decision = None
        if gate:
            approvers = self.approvers(state)
            why = refusal(
                self.gh.actor,
                bot=self.gh.actor.endswith("[bot]"),
                association=None,
                approvers=approvers,
                permission=self.api.permission,
            )
            if why is not None:
                self.note(
                    rid,
                    "decision_refused",
                    {
                        "node_id": gate,
                        "by": self.gh.actor,
                        "reason": why,
                        "command": f"dispatch {verdict} {gate}",
                    },
                    f"decision by {self.gh.actor} refused",
                    f"refused-r{self.gh.run_id or time.time_ns()}",
                )
                raise StateError(f"decision refused: {why}")
            if verdict == "reject" and not visible(t.inputs.get("reason", "")):
                raise UsageError(
                    "a reject needs the reason input: a rejection is recorded with why, in "
                    "words that show"
                )
            decision = Decision(
                gate, verdict == "approve", self.gh.actor, t.inputs.get("reason", "")
            )
        said = t.inputs.get("guidance", "").strip()
        retry = t.inputs.get("retry") == "true" or bool(said)  # guidance is for a retry
        if said and decision is not None:
            raise UsageError("the guidance input re-arms failed nodes; it takes no gate decision")
        words = Guidance(said, self.gh.actor) if said else None
        end = self.resume(rid, run=run, decision=decision, retry_failed=retry, guidance=words)
        number = pr["number"] if pr is not None else None
        return self.finish(end, number=number)

    def on_schedule_waits(self) -> int:
        """A scheduled job: continue each run whose wait is over — paused for a provider's
        limit (from its conservative earliest retry on: a limit still in force pauses it
        again, so the schedule polls) or at a day's spend cap (from the next UTC day)."""
        from omg.leg.wait import sort_out

        waits = self.runs.waits()
        due, damaged = sort_out(waits, datetime.now(UTC))
        for rid, why in damaged.items():  # named and skipped: damage lets no run go early
            say(
                f"omg: the wait of run {rid!r} was skipped: refs/omg/waits/{rid} on "
                f"{self.args.push} is damaged ({why}); the other runs go on. Remove it with "
                f"`git push {self.args.push} :refs/omg/waits/{rid}`; `omg resume` or "
                "`/omg retry` continues its run at once"
            )
        code = 1 if damaged else 0
        if not due:
            waiting = f"no run waits to be continued now ({len(waits)} waiting)"
            return max(code, self.skip(waiting, quiet=False))
        for rid in due:  # one leg each, one after the other
            try:
                code = max(code, self.continue_waiting(rid))
            except OmgError as exc:  # one run's trouble does not hold the others back
                say(
                    f"omg: the wait of run {rid!r} was not continued: {exc} (a wait omg did "
                    f"not record is removed with `git push {self.args.push} "
                    f":refs/omg/waits/{rid}`)"
                )
                code = max(code, 1)
            self.notes.clear()
        return code

    def continue_waiting(self, rid: str) -> int:
        """The next leg of run ``rid``, which the remote records as waiting; a run that no
        longer waits (superseded, decided, continued by hand) has its wait cleared instead."""
        if not self.fetch(rid):
            say(f"omg: run {rid} waits on {self.args.push}, but its branch is gone")
            self.runs.drop_wait(rid)
            return 0
        run = open_run(self.args.runs_dir, rid)
        last = run.state["legs"][-1] if run.state["legs"] else None
        waiting = last is not None and last.get("reason") in ("limit", "spend_cap")
        if run.state["status"] != "paused" or not waiting:
            say(f"omg: run {rid} is {run.state['status']}: it waits for nothing any more")
            self.runs.drop_wait(rid)
            return 0
        pr = run.state.get("pull_request")
        end = self.resume(rid, run=run)
        return self.finish(end, number=pr["number"] if pr is not None else None)

    # -- the pieces ----------------------------------------------------------------------

    def graph_path(self) -> Path:
        if self.args.graph is None:
            raise UsageError(
                f"a {self.gh.event_name} leg needs the graph: pass --graph PATH or set OMG_GRAPH "
                "(the action's `graph` input)"
            )
        return self.args.graph

    def pr_graph(self, t: PullRequest) -> PrGraph:
        """The graph as the commit the PR targets has it (never the PR's), and its change."""
        from omg.leg.prgraph import Base

        found = self.runs.pr_graph(
            Base(t.number, t.head_sha, t.base_sha, t.base_ref), self.graph_path()
        )
        self.findings = list(found.findings)
        return found

    def graph_file(self) -> tuple[Graph, Path]:
        from omg.graph.load import check_file, load_graph

        path = self.graph_path()
        graph, found = check_file(path)
        if graph is None:
            load_graph(path)  # raises the refusal that lists every error
            raise AssertionError("unreachable: an invalid graph is refused")
        self.findings = [f for f in found if f.severity != "error"]
        return graph, path

    def approvers(self, state: State) -> tuple[str, ...]:
        """Who may decide on the run: the checkout's graph file (this job's branch, as it is
        now), or — for a PR into another branch, or a graph renamed since — the run's snapshot,
        which is its base's graph; never a file of the PR."""
        base = state.get("pull_request", {}).get("base_ref", "")
        if base and base != (self.gh.workflow_branch or self.default_branch):
            return tuple(state["graph"].get("approvers") or ())
        if self.args.graph is not None and self.args.graph.is_file():
            graph, _ = self.graph_file()
            if graph.name == state["graph"].get("name"):
                return graph.approvers
        return tuple(state["graph"].get("approvers") or ())

    def start(
        self,
        graph: Graph,
        source: Path,
        rid: str,
        pr: PullRequestRecord | None,
        *,
        sha256: str | None = None,
    ) -> LegEnd | None:
        """A new run's first leg; ``pr``: the pull request head it judges (None for a run a
        dispatch or schedule started: it reports in the step summary only); ``sha256``: of
        the graph file as it was read (a PR's base), when not the file on disk."""
        from omg.leg.start import start_run

        stamp: EventFields = {**self.stamp()}
        say(f"omg: starting run {rid} of {graph.name!r}")
        env = self.environment(rid)
        if pr is not None:
            stamp["pull_request"] = pr
            assert env.commits is not None
            env.commits.workspace.base = self.runs.pr_base(env.commits.repo, pr)  # lanes: head
            self.show_status(pr["head_sha"], graph.name, Situation("running"), leg=1, pr=pr)
            self.watch(rid, env, graph, pr, leg=1)
        try:
            return start_run(
                graph,
                source,
                self.args.inputs,
                env,
                self.args.limits,
                run_id=rid,
                stamp=stamp,
                source_sha256=sha256,
            )
        except MovedOn as lost:
            self.lost(rid, lost)
            return None

    def resume(
        self,
        rid: str,
        *,
        decision: Decision | None = None,
        retry_failed: bool = False,
        quiet_if_paused: bool = False,
        contest: bool = False,
        run: Run | None = None,
        stamp: EventFields | None = None,
        guidance: Guidance | None = None,
    ) -> LegEnd | None:
        """Run the run's next leg; None when nothing may run. ``run``: the run as the caller
        opened it, unchanged since. With ``contest`` a lost race raises MovedOn for the caller
        to judge again; without, the leg ends saying why."""
        from omg.leg.start import resume_run

        run = run or open_run(self.args.runs_dir, rid)
        state = run.state
        if quiet_if_paused and state["paused_at"] and decision is None:
            return None
        if state["status"] == "superseded":
            self.notes.append(f"run {rid} was superseded; nothing more runs on it")
            return None
        if state["paused_at"] and decision is None and not retry_failed:
            self.notes.append(f"run {rid} waits at gate {state['paused_at']}")
            return None
        say(f"omg: continuing run {rid}")
        pr = state.get("pull_request")
        if pr is not None:
            name = str(state["graph"].get("name") or "")
            self.show_status(
                pr["head_sha"], name, Situation("running"), leg=len(state["legs"]) + 1, pr=pr
            )
        env = self.environment(rid, run)
        if pr is not None:
            self.watch(rid, env, run.graph, pr, leg=len(state["legs"]) + 1, events=run.rundir)
        try:
            return resume_run(
                rid,
                env,
                self.args.limits,
                retry_failed=retry_failed,
                decision=decision,
                stamp={**self.stamp(), **(stamp or {})},
                guidance=guidance,
            )
        except MovedOn as lost:
            if contest:
                raise
            self.lost(rid, lost)
            return None
        except RunFailed as exc:  # a failed run: report it, do not refuse the job
            self.notes.append(str(exc))
            return None
        except StateError as exc:
            if open_run(self.args.runs_dir, rid).state["status"] == "superseded":
                self.notes.append(str(exc))  # a note folded in at the leg's start said so
                return None
            raise

    def watch(
        self,
        rid: str,
        env: Environment,
        graph: Graph,
        pr: PullRequestRecord,
        *,
        leg: int,
        events: RunDir | None = None,
    ) -> None:
        """Hand the leg's recorder a listener that shows its progress on the PR as it goes."""
        from omg.cli.live import LiveReport
        from omg.leg.start import leg_mask

        self.live = LiveReport(
            self.api,
            graph,
            pr["head_sha"],
            pr["number"],
            self.links(rid),
            leg_mask(env, graph),
            list(events.read_events()) if events is not None else [],
            leg,
            interval=progress_interval(self.environ),
        )
        env.listeners = [*env.listeners, self.live]

    def running_elsewhere(self, rid: str, state: State) -> str:
        """Why no comment may start a leg of the run now — its last leg is open, carried by
        another workflow run, which may be running it this very moment — or '' when none is."""
        where = leg_elsewhere(state, self.gh.run_id)
        if not where:
            return ""
        return (
            f"run {rid} is running leg {state['legs'][-1]['leg']} ({where}); comment once the "
            "omg comment asks for a decision (if that leg was cut short, re-run its job to "
            "continue the run)"
        )

    def supersede(self, old: str, new_head: str) -> None:
        """The old head's run stops counting, so no decision on it lands: recorded on its
        branch when it is at rest, else as a note the leg running it folds in at its end."""
        from omg.leg.notes import on_branch

        if not self.fetch(old):
            return
        fields: EventFields = {
            "head_sha": new_head,
            "by": self.gh.actor or "github",
            "reason": f"the pull request moved to {new_head[:12]}",
        }
        what, nid = f"superseded by {new_head[:12]}", f"superseded-{new_head}"
        for _ in range(RACE_TRIES):
            state = open_run(self.args.runs_dir, old).state
            if state["status"] in ("passed", "failed", "superseded"):
                return
            if state["legs"] and state["legs"][-1]["outcome"] is None:
                self.note(old, "run_superseded", fields, what, nid)  # a leg may be running it
                break
            landed = self.settle(  # a leg that advanced it meanwhile: look again
                old,
                lambda: on_branch(
                    self.runs.masked(old),
                    self.runs.commits(old),
                    "run_superseded",
                    fields,
                    nid,
                    what,
                ),
            )
            if not isinstance(landed, Lost):
                break
        else:
            self.note(old, "run_superseded", fields, what, nid)
        self.notes.append(f"run {old} (the previous head) is superseded; its record is kept")
        state = open_run(self.args.runs_dir, old).state
        old_head = state.get("pull_request", {}).get("head_sha", "")
        if old_head:
            name = str(state["graph"].get("name") or "")
            self.show_status(old_head, name, Situation("superseded"))

    def state_at(self, rid: str, ref: str) -> tuple[str, int] | None:
        """The run id and seq of the state commit ``ref`` of run ``rid``'s record, if any."""
        commits = self.environment(rid).commits
        assert commits is not None
        return commits.state_seq(ref)

    def refuse(
        self, rid: str, number: int, comment_id: int, login: str, cmd: Command, why: str
    ) -> int:
        """Record the refusal on the run, answer the comment once, and change nothing else."""
        written = f"{cmd.text} (comment {comment_id})"
        rundir = RunDir(self.args.runs_dir / rid)
        seen = any(
            ev["event"] == "decision_refused" and ev.get("command") == written
            for ev in rundir.read_events()
        )
        why = excerpt(why)  # a refusal may quote the comment (a gate it named): bounded
        if not seen:  # else a re-run of this job: the refusal is on record already
            fields: EventFields = {"by": login, "reason": why, "command": written}
            if cmd.gate:
                fields["node_id"] = excerpt(cmd.gate)
            what = f"{cmd.verb} by {login} refused"
            self.note(rid, "decision_refused", fields, what, f"refused-c{comment_id}")
        key = f"<!-- omg:reply={comment_id} -->"
        answered = self.reply(number, key, login, f"omg refused {code(cmd.text)}: {code(why)}.")
        self.notes.append(f"refused {cmd.text!r} from {login}: {why}")
        say(f"omg: {self.notes[-1]}")
        if not answered:  # one of a burst: on record, and no REST call more than it took
            return self.skip(" ".join(self.notes), quiet=False)
        return self.report_only(rid, number)
