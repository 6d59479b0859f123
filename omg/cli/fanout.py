"""`omg leg --node ID` and `omg leg --fold`: a fan-out wave's matrix job, and the job after it
that folds the wave's records into the run branch and dispatches the next wave."""

from __future__ import annotations

from collections.abc import Mapping

from omg.cli import exits
from omg.cli.job import CiJob, LegArgs
from omg.cli.leg_report import say
from omg.cli.report import Situation
from omg.errors import MovedOn, StateError, UsageError
from omg.github import outputs
from omg.github.env import actions
from omg.github.event import Dispatch, read_trigger
from omg.github.markdown import cell, code
from omg.leg.run import Run, open_run
from omg.leg.start import Environment, LegEnd
from omg.schedule import statuses
from omg.state import State


def fanout(args: LegArgs, environ: Mapping[str, str]) -> int:
    """`omg leg --node ID` or `omg leg --fold`: one job of a fan-out wave."""
    if args.node and args.fold:
        raise UsageError("--node runs a matrix entry and --fold the job after them: pick one")
    return FanoutJob(actions(environ), args, environ).handle()


class FanoutJob(CiJob):
    """One job of an `omg-fanout` workflow run: a matrix entry, or the fold after them."""

    held = ""  # why the next wave is not dispatched although work is left

    def handle(self) -> int:
        rid = self.args.run_id
        if not rid:
            trigger = read_trigger(self.gh.event_name, self.gh.event_path)
            rid = trigger.inputs.get("run-id", "") if isinstance(trigger, Dispatch) else ""
        if not rid:
            raise UsageError("a fan-out job needs the run: pass --run-id (or OMG_RUN_ID)")
        if not self.fetch(rid):
            raise StateError(
                f"{self.args.push} has no run {rid!r}; the plan job starts it with "
                f"`omg plan {rid} --matrix --fetch {self.args.push} --start GRAPH`"
            )
        if self.args.node:
            return self.on_node(rid, self.args.node)
        return self.on_fold(rid)

    def on_node(self, rid: str, node: str) -> int:
        from omg.leg.publish import run_entry

        try:
            done = run_entry(
                rid,
                node,
                self.args.base,
                self.environment(rid),
                remote=self.args.push,
                limits=self.args.limits,
                stamp=self.stamp(),
            )
        except MovedOn as lost:
            return self.skip(f"another job published entry {node} first; dropped ({lost})")
        if done.end is None:
            return self.skip(done.why, quiet=False)
        state = done.end.state
        got = statuses(done.end.graph, state["nodes"])
        verdicts = {n: got[n] for n in done.nodes}
        lines = "\n".join(f"| {cell(n)} | {v} |" for n, v in verdicts.items())
        outputs.write_summary(
            self.gh.summary,
            f"### omg · run {code(rid)} · entry {code(node)}\n\n| node | status |\n|---|---|\n"
            f"{lines}\n\nRecord {code((done.record or '')[:12])} published for the fold.\n",
        )
        failed = any(v == "failed" for v in verdicts.values())
        outputs.write_outputs(
            self.gh.output,
            {
                "status": "failed" if failed else "published",
                "run-id": rid,
                "record": done.record or "",
                "cost-usd": f"{state['cost_usd']:.4f}",
            },
        )
        shown = ", ".join(f"{n} {v}" for n, v in verdicts.items())
        say(f"omg: run {rid}: entry {node} published ({shown})")
        return exits.FAILED if failed else exits.PASSED

    def on_fold(self, rid: str) -> int:
        from omg.leg.intake import drop, fold_wave, gather

        env = self.environment(rid)
        assert env.commits is not None
        repo = env.commits.repo
        head = repo.run_head(rid) or ""
        if self.args.base and head != self.args.base:
            return self.skip(
                f"the wave planned at {self.args.base[:12]} was folded already (run {rid} is at "
                f"{head[:12]})",
                quiet=False,
            )
        run = open_run(self.runs_dir, rid)
        state = run.state
        number = state.get("pull_request", {}).get("number")
        if state["paused_at"]:
            self.notes.append(f"run {rid} waits at gate {state['paused_at']}")
            return self.report_only(rid, number)
        wave = gather(
            repo, self.args.push, run.graph, state, head, max_jobs=self.args.max_jobs, warn=say
        )
        try:
            end = fold_wave(rid, env, wave, self.stamp())
        except MovedOn as lost:
            self.lost(rid, lost)
            return self.report_only(rid, number)
        drop(repo, self.args.push, rid, wave, say)
        say(f"omg: run {rid}: folded {', '.join(wave.folded) or 'nothing'}")
        if wave.missing:
            self.notes.append(f"no record from {', '.join(wave.missing)}: planned again")
        if wave.stale:
            say(f"omg: dropped stale records: {', '.join(wave.stale)}")
        self.held = self.stuck(end, state)
        if self.held:
            self.notes.append(self.held)
        return self.finish(end, number=number)

    @staticmethod
    def stuck(end: LegEnd | None, before: State) -> str:
        """Why not to dispatch again: two waves in a row that published nothing."""
        if end is None or not end.state["legs"]:
            return ""
        now = end.state["legs"][-1].get("fanout", {})
        last = before["legs"][-1].get("fanout") if before["legs"] else None
        if now.get("folded") or last is None or last.get("folded"):
            return ""
        return (
            "two waves in a row published nothing, so no next wave was dispatched; see the "
            "matrix jobs' logs, then dispatch omg-fanout again with this run-id"
        )

    def situation(self, run: Run, end: LegEnd | None, env: Environment) -> Situation:
        sit = super().situation(run, end, env)
        if self.held and sit.next == "dispatch":
            return Situation(sit.status, sit.gate, sit.state_ref, sit.head_sha, "none", sit.note)
        return sit
