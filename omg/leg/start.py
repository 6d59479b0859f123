"""Starting and resuming: one leg per process, rebuilt from the run directory each time."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from omg import schedule
from omg.dotomg import NAME, ensure_ignored
from omg.errors import Hint, InputError, MovedOn, OmgError, RunFailed, StateError, UsageError
from omg.graph.load import graph_from_snapshot, resolve_inputs
from omg.graph.model import Graph
from omg.graphdata import GraphData
from omg.leg import decisions
from omg.leg.attempt import Context
from omg.leg.caps import CapGuard, SpendCaps, post_wait
from omg.leg.deadline import Deadline
from omg.leg.decisions import Decision, Guidance
from omg.leg.keys import keyless, open_keys
from omg.leg.loop import Leg, LegOptions
from omg.leg.workspace import LocalWorkspace
from omg.mask import MASK, Masker
from omg.records import PullRequestRecord
from omg.runners.base import AgentRuntime
from omg.runners.process import Marked, Spawner, reap_run, run_mark, spawn
from omg.runners.registry import agents, key_rules
from omg.runners.room import Rooms
from omg.schedule import LegResult
from omg.state import State, apply, empty_state, fold
from omg.state.events import Event, EventFields
from omg.state.recorder import Listener, Recorder
from omg.state.runid import MAX_RUN_ID, check_run_id, slug
from omg.state.store import RunDir, catch_up, load_run

if TYPE_CHECKING:
    from omg.leg.commits import RunCommits


def _ignore(message: str) -> None:
    return None


@dataclass
class Environment:
    """What a leg takes from the outside world; tests replace any part of it."""

    runs_dir: Path
    root: Path
    parent_env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    spawn: Spawner = spawn
    agents: Mapping[str, AgentRuntime] | None = None  # by runtime name; shell nodes run sh
    listeners: Sequence[Listener] = ()  # the CLI's progress printer, for one
    commits: RunCommits | None = None  # set when the run lives in git
    warn: Callable[[str], None] = _ignore
    rehearsal: bool = False  # agent nodes talk to the stub model (parent_env points there)
    #: The secrets of omg's own environment (the leg adds its graph's: ``leg_mask``).
    mask: Masker = field(default_factory=lambda: Masker.from_env(os.environ))
    #: Inputs given to this leg: a new run's, or a resumed run's secret ones again.
    inputs: Mapping[str, str] = field(default_factory=dict)


def leg_mask(env: Environment, graph: Graph, inputs: Mapping[str, str] | None = None) -> Masker:
    """The leg's one masker: omg's own secrets, the children's environment's, the variables
    the graph lists in ``secrets:``, and the values of its secret inputs."""
    given = {**env.inputs, **(inputs or {})}
    secret = [v for k, v in given.items() if k in graph.secret_inputs]
    return env.mask.plus(Masker.from_env(env.parent_env, graph.secrets)).plus(secret)


def snapshot_mask(env: Environment, data: GraphData) -> Masker:
    """``leg_mask`` from a run's graph snapshot as it is (a note between legs checks no graph)."""
    names = [str(s) for s in data.get("secrets") or ()]
    specs = data.get("inputs")
    specs = specs if isinstance(specs, Mapping) else {}  # a list of names declares no secret
    secret = {k for k, v in specs.items() if isinstance(v, Mapping) and v.get("secret")}
    given = [v for k, v in env.inputs.items() if k in secret]
    return env.mask.plus(Masker.from_env(env.parent_env, names)).plus(given)


def _secret_inputs(graph: Graph, state: State, env: Environment) -> dict[str, str]:
    """A resumed run's inputs: the recorded ones, and its secret ones given to this leg again
    (omg never records them); an InputError naming those that were not."""
    out = dict(state["inputs"])
    missing = []
    for name in sorted(graph.secret_inputs):
        if name in env.inputs:
            out[name] = env.inputs[name]
        elif out.get(name) == MASK:
            missing.append(name)
    if missing:
        raise InputError(
            f"input(s) {', '.join(missing)} of graph {graph.name!r} are secret, so omg never "
            "recorded their values; give them to this leg again: "
            + " ".join(f"-i {m}=VALUE" for m in missing)
            + " (omg resume), or one NAME=VALUE a line in OMG_INPUTS (omg leg)"
        )
    return out


@dataclass(frozen=True)
class LegEnd:
    """What a start or resume hands back: the run, how its leg ended (None: no leg ran)."""

    run_id: str
    result: LegResult | None
    state: State
    graph: Graph


def new_run_id(graph: Graph, runs_dir: Path) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    base = f"{stamp}-{slug(graph.name or 'run', MAX_RUN_ID - len(stamp) - 5)}"
    rid, n = base, 1
    while (runs_dir / rid).exists():
        n += 1
        rid = f"{base}-{n}"
    return rid


def start_run(
    graph: Graph,
    source: Path,
    given: Mapping[str, str],
    env: Environment,
    opts: LegOptions,
    run_id: str | None = None,
    stamp: EventFields | None = None,
    source_sha256: str | None = None,
) -> LegEnd:
    """The first leg of a new run; ``stamp`` adds fields to its run_started (who carried it);
    ``source_sha256``: the graph file's, when it was read from elsewhere than ``source`` on disk
    (a pull request's base commit)."""
    inputs = resolve_inputs(graph, given)
    rid = check_run_id(run_id) if run_id is not None else new_run_id(graph, env.runs_dir)
    rundir = RunDir(env.runs_dir / rid, leg_mask(env, graph, inputs))
    if env.runs_dir.parent.name == NAME:
        ensure_ignored(env.runs_dir.parent)
    if rundir.exists():
        raise StateError(
            f"run {rid!r} already exists in {env.runs_dir}; resume it with "
            f"`omg resume {rid}` or pick another --run-id"
        )
    rundir.lock()
    try:
        rec = Recorder(rundir, empty_state(), leg=1)
        sha = source_sha256
        if sha is None:
            sha = hashlib.sha256(source.read_bytes()).hexdigest() if source.is_file() else ""
        start: EventFields = {
            "graph": {**graph.data},
            "graph_source": str(source),
            "graph_sha256": sha,
            "inputs": {k: MASK if k in graph.secret_inputs else v for k, v in inputs.items()},
            **(stamp or {}),
        }
        if env.rehearsal:
            start["rehearsal"] = True
        result = _run_leg(graph, rec, env, opts, inputs, start, [])
        return LegEnd(rid, result, rec.state, graph)
    finally:
        rundir.close()


def resume_run(
    run_id: str,
    env: Environment,
    opts: LegOptions,
    *,
    retry_failed: bool = False,
    decision: Decision | None = None,
    stamp: EventFields | None = None,
    replay: Sequence[Event] = (),
    guidance: Guidance | None = None,
) -> LegEnd:
    """The next leg of an existing run; ``result`` None when there was nothing to do.

    ``replay``: events other processes recorded (a fan-out wave, merged), appended right
    after this leg's run_started, before anything runs. The whole record is verified first
    (``store.load_run``): a damaged one is refused before anything runs or is written."""
    if guidance is not None:
        if not retry_failed:
            raise UsageError(
                "guidance goes to the nodes --retry-failed re-arms: give it with --retry-failed"
            )
        if guidance.problem():
            raise UsageError(guidance.problem())
    rundir = RunDir(env.runs_dir / check_run_id(run_id))
    if not rundir.exists():
        raise StateError(
            f"no run {run_id!r} in {env.runs_dir}; `omg status` lists the runs there, and a run "
            f"pushed from another machine is fetched with `omg resume --fetch origin {run_id}`"
        )
    rundir.lock()
    try:
        reaped = reap_run(run_mark(rundir.path))  # before any of their nodes runs again
        if reaped:
            env.warn(f"omg: stopped {reaped} process(es) a killed leg of run {run_id!r} left")
        Rooms.of_run(run_mark(rundir.path), env.parent_env).clear()  # and the files they had
        state, last = load_run(rundir)
        catch_up(rundir, state)
        graph = graph_from_snapshot(state["graph"], state["graph_source"])
        rundir.mask = leg_mask(env, graph)
        _warn_if_changed(state, env.warn)
        if state["status"] == "superseded":
            raise StateError(
                f"run {run_id!r} was superseded by head {state.get('superseded_by', '?')[:12]}; "
                "its record is kept, and nothing more runs on it"
            )
        if state.get("rehearsal", False) != env.rehearsal:
            raise UsageError(
                f"run {run_id!r} is a rehearsal; resume it with --rehearse SCRIPT"
                if not env.rehearsal
                else f"run {run_id!r} spends for real; drop --rehearse to resume it"
            )
        status = schedule.statuses(graph, state["nodes"])
        # A leg killed before its run_finished left the run open: this leg runs what was in
        # flight, or — if nothing was — just closes the run with the outcome it reached.
        abandoned = bool(state["legs"]) and state["legs"][-1]["outcome"] is None
        if decision is not None:
            decisions.check(state, decision)
        elif state["paused_at"] and not retry_failed:
            _publish(env, state, strict=False)
            raise decisions.refuse_paused(state)
        if not retry_failed and decision is None and not abandoned:
            failed = schedule.failed_for_good(graph, status)
            if failed:
                _publish(env, state, strict=False)
                raise RunFailed(
                    f"run {run_id!r} failed at {', '.join(failed)}",
                    hint=Hint("retry_failed", run_id),
                )
        start: EventFields = {**(stamp or {})}
        if retry_failed:
            rearm = schedule.rearm(graph, state["nodes"], state["gates"])
            start["retry_failed"] = True
            start["hops_reset"] = True  # a human decision: the loops get a fresh hop budget
            if guidance is not None:  # {{ guidance }} from here on, and who gave it
                start["guidance"] = guidance.text
                start["guidance_by"] = guidance.by
            start["rearm"] = list(rearm.nodes)
            if rearm.gates:
                start["forget_gates"] = list(rearm.gates)
            if not abandoned and not _has_work_after(graph, state, start):
                return _nothing_to_do(run_id, env, state, graph)
        elif decision is None and not abandoned and not schedule.unfinished(graph, status):
            return _nothing_to_do(run_id, env, state, graph)
        # a fold runs nothing, so it needs no secret input
        inputs = state["inputs"] if opts.only == frozenset() else _secret_inputs(graph, state, env)
        rec = Recorder(rundir, state, leg=len(state["legs"]) + 1, last_seq=last)
        given = [decision] if decision is not None else []
        result = _run_leg(graph, rec, env, opts, inputs, start, given, replay)
        return LegEnd(run_id, result, rec.state, graph)
    finally:
        rundir.close()


def _nothing_to_do(run_id: str, env: Environment, state: State, graph: Graph) -> LegEnd:
    """No leg runs; what an earlier leg recorded but did not commit or push goes out now."""
    _publish(env, state, strict=True)
    return LegEnd(run_id, None, state, graph)


def _publish(env: Environment, state: State, *, strict: bool) -> None:
    """Commit and push what an earlier leg recorded here and was killed before committing or
    pushing (its last events, its last commits). ``strict``: a failure is the leg's; else it
    is only warned about, ahead of the refusal the caller raises."""
    if env.commits is None:
        return
    try:
        env.commits.publish(state, env.runs_dir / state["run_id"])
    except OmgError as exc:
        if strict:
            raise
        env.warn(
            f"warning: what an earlier leg recorded of run {state['run_id']!r} stays "
            f"unpublished: {exc}"
        )


def _run_leg(
    graph: Graph,
    rec: Recorder,
    env: Environment,
    opts: LegOptions,
    inputs: Mapping[str, str],
    start: EventFields,
    given: list[Decision],
    replay: Sequence[Event] = (),
) -> LegResult:
    from omg.git.identity import room_gitconfig  # pygit2: only once a leg runs

    commits = env.commits
    # A graph of shell nodes makes no agent runner: its children lose every runtime's key all
    # the same (the runtimes' key rules), and no node of it asks for a runtime.
    shell_only = not env.agents and not any(n.kind == "agent" for n in graph.nodes)
    runtimes = {} if shell_only else env.agents or agents()
    ctx = Context(
        graph=graph,
        inputs=inputs,
        rundir=rec.rundir,
        recorder=rec,
        spawn=Marked(env.spawn, run_mark(rec.rundir.path)),  # what a later leg reaps
        agents=runtimes,
        workspace=commits.workspace
        if commits is not None
        else LocalWorkspace(env.root, rec.rundir.run_id),
        parent_env=keyless(  # omg's proxy holds the model keys
            env.parent_env,
            key_rules() if shell_only else [a.keyless for a in runtimes.values()],
        ),
        rooms=Rooms.of_run(
            run_mark(rec.rundir.path), env.parent_env, room_gitconfig(env.parent_env)
        ),
        rehearsal=env.rehearsal,
        deadline=Deadline.after(opts.max_minutes),  # from the leg's start, for the loop and retries
        budget_left=lambda: (
            None
            if graph.budget_usd is None
            else max(0.0, graph.budget_usd - float(rec.read(lambda st: st["cost_usd"])))
        ),
    )
    for listener in env.listeners:
        rec.listen(listener)
    shift = 0  # events noted since the last leg, folded in first
    if commits is not None:
        commits.take_lease(rec)  # refused while a live leg elsewhere holds the run
    try:
        if commits is not None:
            start.update(commits.before_leg(rec))
            before = rec.last_seq
            from omg.leg import notes  # a run kept in git only

            notes.fold_pending(rec, commits, env.warn)
            shift = rec.last_seq - before
            if rec.state["status"] == "superseded":  # a note said so while a leg still ran it
                commits.noted(rec, f"superseded by {rec.state.get('superseded_by', '?')[:12]}")
                raise StateError(
                    f"run {rec.rundir.run_id!r} was superseded by head "
                    f"{rec.state.get('superseded_by', '?')[:12]}; nothing more runs on it"
                )
        guard = _cap_guard(graph, rec, env, opts, start.get("pull_request"))
        if guard is not None and any(n.kind == "agent" for n in graph.nodes):
            guard.check()  # a spend book that cannot be read: refused before anything is recorded
            ctx.cap_room = guard.room
        if any(n.kind == "agent" for n in graph.nodes):
            ctx.keys = open_keys(env.parent_env, runtimes)  # read once: no child sees them
            if ctx.keys is not None and ctx.keys.remote() and not env.rehearsal:
                from omg.leg import rootcheck

                rootcheck.check(env.parent_env, env.spawn, env.warn)  # root reads omg's memory
        judged = rec.ref()  # what the human looked at: the state before this leg's first event
        rec.emit("run_started", start)
        for ev in replay:
            rec.replay({**ev, "seq": int(ev["seq"]) + shift})
        for d in given:
            decisions.record(rec, graph, d, judged)
        for d in decisions.undelivered(graph, rec.state):  # recorded, never asked again: applied
            decisions.deliver(rec, graph, d)
        if commits is not None:
            commits.settled(rec, "", "", 0)
        leg = Leg(
            ctx,
            opts,
            on_settled=None if commits is None else (lambda n, v, r: commits.settled(rec, n, v, r)),
            guard=guard,
        )
        try:
            result = leg.run()
        except MovedOn:
            raise  # another leg holds the run: nothing of this one is pushed
        except BaseException:
            if commits is not None:  # a leg that failed pushes what it settled
                commits.push_pending(rec)
            raise
        if commits is not None:
            from omg.leg import notes

            notes.fold_pending(rec, commits, env.warn)  # what was noted while this leg ran
            commits.after_leg(rec, result)
            if commits.push_remote is not None:
                post_wait(commits.repo, commits.push_remote, rec.rundir.run_id, rec.state["legs"])
        return result
    finally:
        ctx.rooms.clear()  # every execution of the leg has ended: no room of the run stays
        if ctx.keys is not None:
            ctx.keys.close()
        if commits is not None:
            commits.release_lease()


def _cap_guard(
    graph: Graph, rec: Recorder, env: Environment, opts: LegOptions, pr: PullRequestRecord | None
) -> CapGuard | None:
    """The spend caps this leg enforces (the leg's own, else the graph's), against the books
    in git; a run kept outside git has no books, so its caps are warned about, not enforced.
    ``pr``: the pull request the leg's run_started names (a first leg's), else the run's."""
    caps = (opts.caps or SpendCaps()).over(graph.pr_budget_usd, graph.day_budget_usd)
    if not caps:
        return None
    if env.commits is None:
        env.warn(
            "warning: the spend caps (pr_budget_usd, day_budget_usd) are kept in git; this "
            "run is not (--no-commit), so they are not enforced"
        )
        return None
    pr = pr or rec.state.get("pull_request")
    return CapGuard(
        repo=env.commits.repo,
        remote=env.commits.push_remote,
        books_from=env.commits.books_from,
        run_id=rec.rundir.run_id,
        caps=caps,
        pr=pr["number"] if pr is not None else None,
        approved=lambda: float(rec.read(lambda st: st.get("approved_usd", 0.0))),
        rehearsal=env.rehearsal,
        warn=env.warn,
    )


def _has_work_after(graph: Graph, state: State, start: EventFields) -> bool:
    """Whether the run_started ``start`` would leave anything to run (folded on a copy)."""
    probe = fold([], state)
    event = {"event": "run_started", "seq": state["seq"] + 1, "leg": len(state["legs"]) + 1}
    apply(probe, cast(Event, {**event, "ts": "", "run_id": state["run_id"], **start}))
    return bool(schedule.unfinished(graph, schedule.statuses(graph, probe["nodes"])))


def _warn_if_changed(state: State, warn: Callable[[str], None]) -> None:
    src = Path(state["graph_source"])
    spliced = state["graph"].get("resolved_from")
    if isinstance(spliced, Mapping) and spliced:  # a snapshot is data read back: still checked
        from omg.graph.fragments.file import changed_sources

        for rel in changed_sources(src, spliced):
            warn(
                f"warning: fragment {rel} has changed since this run started; the run "
                "continues the graph exactly as it was spliced and snapshotted in state.json"
            )
    if (
        state["graph_sha256"]
        and src.is_file()
        and hashlib.sha256(src.read_bytes()).hexdigest() != state["graph_sha256"]
    ):
        warn(
            f"warning: {src} has changed since this run started; the run continues the graph "
            "exactly as it was snapshotted in state.json, not as the file now reads"
        )
