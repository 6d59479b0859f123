"""A matrix job's leg: one entry of a fan-out wave run on its own machine, its record handed off
to the fold as a hand-off directory the workflow uploads (the job writes nothing), or — a
trusted one-job wave — pushed to ``refs/omg/fanout/<run>/<entry>``; never the run branch, so
siblings never race."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from omg import matrix, schedule
from omg.errors import UsageError
from omg.git.names import fanout_ref, run_ref
from omg.git.pack import head_commit, remote_run_refs, run_refs
from omg.git.remote import GitToken
from omg.git.repo import RunRepo
from omg.graph.load import graph_from_snapshot
from omg.kinds import Warn
from omg.leg.commits import RunCommits
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, LegEnd, resume_run
from omg.schedule import LegResult
from omg.state.events import EventFields
from omg.state.recorder import Recorder
from omg.state.store import RunDir


class EntryCommits(RunCommits):
    """Nothing goes to the run branch: the entry's record is committed and pushed once, at the
    end of its leg. A job killed midway publishes nothing, so its entry is planned again."""

    def __init__(
        self,
        repo: RunRepo,
        run_id: str,
        *,
        push: str | None,
        base: str,
        warn: Warn,
        entry: str,
        wave_base: str,
        previous: str | None,
    ) -> None:
        super().__init__(repo, repo.root, run_id, push=push, base=base, warn=warn)
        self.entry = entry
        self.wave_base = wave_base
        self.previous = previous  # what the remote held for the entry (a stale record), if any
        self.record: str | None = None
        #: a hand-off: the record is one commit on the wave's base, on the local run branch,
        #: and its lanes move on their own branches (the bundle carries both)
        self.hand_off = push is None

    def take_lease(self, rec: Recorder) -> None:
        return None  # a wave's entries run at once by design; each record is its own ref

    def before_leg(self, rec: Recorder) -> EventFields:
        self.head = self.wave_base
        self.workspace.recorded = dict(rec.state["worktrees"])
        rec.state_ref = f"commit:{self.head}"
        return {"base": self.head}

    def settled(self, rec: Recorder, node_id: str, verdict: str, round_: int) -> None:
        return None  # the record is published whole or not at all

    def notes(self) -> dict[str, bytes]:
        return {}  # the fold takes the run's notes in: an entry's record holds its nodes alone

    def after_leg(self, rec: Recorder, result: LegResult) -> None:
        rec.flush()
        message = f"omg {self.run_id} entry {self.entry}: {result.outcome}"
        if self.hand_off:
            self.record = self.repo.record_entry(
                self.run_id, self.entry, rec.rundir.path, message, parents=[self.wave_base],
                ref=run_ref(self.run_id),
            )  # fmt: skip
            return
        lanes = [self.repo.worktree_head(wt) for wt in self.workspace.lanes.values()]
        # parents: the wave's base (the fold checks it), the lanes' heads (so the push carries
        # their commits), and the remote's current value (so the push fast-forwards only it)
        parents = list(dict.fromkeys([self.wave_base, *lanes, *filter(None, [self.previous])]))
        self.record = self.repo.record_entry(
            self.run_id, self.entry, rec.rundir.path, message, parents=parents
        )
        ref = fanout_ref(self.run_id, self.entry)
        if self.push_remote is not None:
            self.repo.push(self.push_remote, [f"{ref}:{ref}"])


@dataclass(frozen=True)
class EntryEnd:
    """What a matrix job did: its leg (None when it had nothing to do, and ``why``)."""

    end: LegEnd | None
    why: str = ""
    record: str | None = None
    nodes: tuple[str, ...] = ()


def run_entry(
    run_id: str,
    name: str,
    wave_base: str | None,
    env: Environment,
    *,
    remote: str,
    limits: LegOptions,
    stamp: EventFields,
    hand_off: Path | None = None,
    tokens: Sequence[GitToken] = (),
) -> EntryEnd:
    """Run entry ``name`` of the wave planned at ``wave_base`` (default: the run branch now),
    unless that wave was folded already or the entry's record for it is published; with
    ``hand_off``, its record and lanes are bundled into that directory, nothing is pushed."""
    assert env.commits is not None, "a matrix job runs in a git checkout"
    repo = env.commits.repo
    head = repo.run_head(run_id)
    if head is None:
        raise UsageError(f"run {run_id!r} has no run branch here; fetch it first")
    if wave_base and head != wave_base:
        return EntryEnd(
            None,
            f"the wave planned at {wave_base[:12]} was folded already (run {run_id} is at "
            f"{head[:12]}); this job has nothing to do",
        )
    state = RunDir(env.runs_dir / run_id).read_state()
    graph = graph_from_snapshot(state["graph"], state["graph_source"])
    entry = next((e for e in matrix.entries(graph, state["nodes"]) if e.node == name), None)
    if entry is None:
        status = schedule.statuses(graph, state["nodes"]).get(name)
        if status is None:
            raise UsageError(f"run {run_id!r} has no node {name!r}; the matrix names its entries")
        if status in ("passed", "failed"):
            return EntryEnd(None, f"{name} has {status} already in run {run_id}; nothing to run")
        raise UsageError(
            f"{name} is not an entry of run {run_id}'s next wave (it is {status}); "
            f"`omg plan {run_id} --matrix` lists the wave"
        )
    previous = None if hand_off else repo.fetch_records(remote, run_id, name).get(name)
    if previous is not None and repo.parents(previous)[:1] == [head]:
        return EntryEnd(
            None,
            f"entry {name}'s record for this wave is published already ({previous[:12]}); "
            "a re-run executes nothing",
        )
    commits = EntryCommits(
        repo,
        run_id,
        push=None if hand_off else remote,
        base=env.commits.workspace.base,
        warn=env.warn,
        entry=name,
        wave_base=head,
        previous=previous,
    )
    if hand_off is not None:  # its caps read the remote's books; the fold books the wave
        commits.books_from = remote
    env.commits = commits

    # a matrix job runs its entry whole (--max-nodes caps a leg, not an entry) and leaves the
    # pause to the fold, which sees every entry
    opts = replace(limits, max_nodes=None, only=frozenset(entry.nodes), pause_idle=False)
    olds = remote_run_refs(repo.root, remote, run_id, tokens) if hand_off else {}
    end = resume_run(run_id, env, opts, stamp=stamp)
    if hand_off is not None and commits.record is not None:
        _bundle(repo.root, hand_off, run_id, name, olds, end)
    return EntryEnd(end, record=commits.record, nodes=entry.nodes)


def _bundle(
    root: Path, out: Path, run_id: str, entry: str, olds: dict[str, str], end: LegEnd
) -> None:
    """The entry's record (one commit on the wave's base) and its lanes' new commits down to
    where the remote held them before the leg (``olds``), handed off into ``out`` for the
    fold; it publishes nothing else."""
    from omg.ci.handoff.bundle import Plan, bundle
    from omg.ci.handoff.manifest import nothing

    here = run_refs(root, run_id)  # the lanes this job never checked out did not move
    moved = {ref: old for ref, old in olds.items() if ref in here}
    graph = str(end.state["graph"].get("name") or "")
    plan = Plan(run_id, graph, len(end.state["legs"]), moved, (head_commit(root),), entry)
    bundle(root, out, plan, nothing())
