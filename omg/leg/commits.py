"""Git runs: a leg's commits to `omg/runs/<id>`, its pushes, fetches and worktree lanes.

This module decides *when* to commit and push; `omg.git` (the only pygit2 importer) does it.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from omg import strictjson
from omg.errors import GitError, MovedOn, OmgError, UsageError
from omg.git.names import note_ref, run_refspecs
from omg.git.remote import GitToken
from omg.git.repo import RunRepo, open_repo
from omg.git.worktrees import Checkout
from omg.graph.model import Node
from omg.kinds import Warn
from omg.leg import lease
from omg.leg.workspace import LocalWorkspace
from omg.runners.process import run_mark
from omg.schedule import LegResult
from omg.state import LaneRecord, State
from omg.state.events import EventFields
from omg.state.recorder import Recorder
from omg.state.store import RunDir

#: Seconds between pushes of the run branch while a leg runs (``OMG_PUSH_EVERY``): a leg's
#: start, pause, end and failure push whenever they fall; while it runs, a commit is pushed once
#: the last push is this old, so a node settling after a longer spell (an agent node that took
#: minutes) is pushed as it settles. A runner lost mid-leg loses at most this window of settled
#: nodes, which the next leg runs again.
PUSH_EVERY = 5.0


def push_every(environ: Mapping[str, str]) -> float:
    """``OMG_PUSH_EVERY`` (seconds, 0: push every commit), or the default."""
    raw = environ.get("OMG_PUSH_EVERY", "").strip()
    if not raw:
        return PUSH_EVERY
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise UsageError(
            f"OMG_PUSH_EVERY={raw!r} is not a number of seconds; give one such as 5 "
            "(0 pushes after every settled node)"
        )
    return value


class GitWorkspace(LocalWorkspace):
    """Worktree lanes as real pygit2 worktrees; everything else as the local workspace."""

    def __init__(self, repo: RunRepo, root: Path, run_id: str, base: str) -> None:
        super().__init__(root, run_id)
        self.repo = repo
        self.base = base
        self.lanes: dict[str, Checkout] = {}
        self.recorded: dict[str, LaneRecord] = {}  # lane → {branch, commit} from state.json
        self.wants_push = False
        self.lock = threading.Lock()

    def cwd_for(self, node: Node, rendered_cwd: str | None, branch: str | None) -> Path:
        if node.worktree is None:
            return super().cwd_for(node, rendered_cwd, branch)
        name = node.worktree.name
        with self.lock:
            wt = self.lanes.get(name)
            if wt is None:
                rec = self.recorded.get(name)
                start = None if branch else self.repo.lane_base(self.run_id, name)
                if rec is not None:
                    wt = self.repo.restore_worktree(self.run_id, name, rec["commit"], branch=branch)
                elif start is not None:  # no settled node recorded it: back to where it began
                    wt = self.repo.restore_worktree(self.run_id, name, start)
                else:
                    wt = self.repo.acquire_worktree(
                        self.run_id, name, base=self.base, branch=branch
                    )
                self.lanes[name] = wt
                self.wants_push = self.wants_push or node.worktree.push
            return wt.path

    def settle(self, node: Node, verdict: str, round_: int) -> EventFields:
        if node.worktree is None or node.worktree.name not in self.lanes:
            return {}
        with self.lock:
            wt = self.lanes[node.worktree.name]
            rnd = f" round {round_}" if round_ else ""
            self.repo.commit_worktree(wt, f"omg {self.run_id} {node.id}{rnd}: {verdict}")
            return {
                "worktree": wt.name,
                "worktree_branch": wt.branch,
                "worktree_commit": self.repo.worktree_head(wt),
            }

    def lane_trees(self, nodes: Iterable[Node]) -> dict[str, str]:
        names = {n.worktree.name for n in nodes if n.worktree is not None}
        with self.lock:
            open_ = {name: self.lanes[name] for name in sorted(names) if name in self.lanes}
        return {name: self.repo.worktree_tree(wt) for name, wt in open_.items()}


class RunCommits:
    """Commits the run directory after every settled node and at the end of the leg."""

    def __init__(
        self,
        repo: RunRepo,
        root: Path,
        run_id: str,
        *,
        push: str | None,
        base: str,
        warn: Warn,
        push_every: float = PUSH_EVERY,
    ) -> None:
        self.repo = repo
        self.run_id = run_id
        self.push_remote = push
        self.warn = warn
        #: seconds between pushes while a leg runs; its start, pause, end and failure push anyway
        self.push_every = push_every
        self.clock: Callable[[], float] = time.monotonic
        self._pushed_at = float("-inf")
        self._tracked: str | None = None  # the head committed from the run directory's changes
        self.pushes = 0  # pushes of the run branch by this leg
        self.workspace = GitWorkspace(repo, root, run_id, base)
        self.head: str | None = None
        self.warned = False
        #: lane branch → the commit a fold takes in from its matrix jobs (pushed with the run)
        self.moved_lanes: dict[str, str] = {}
        #: notes this leg folded in: their refs are dropped once a push carries them
        self.taken: list[str] = []
        #: the remote this leg's run was fetched from (``--fetch`` without ``--push``)
        self.fetched_from: str | None = None
        self.lease: lease.LegLease | None = None
        self.lease_times = lease.Times()
        self._fetched = False  # the run's refs were fetched for this leg already
        #: the remote the spend books are read from before the leg, when it pushes to none (the
        #: run job of a leg split in two: its caps see every run's spend)
        self.books_from: str | None = None

    def take_lease(self, rec: Recorder) -> None:
        """Hold the run across machines for this leg: with ``--push`` take its lease (refused
        while a live leg elsewhere holds it); with ``--fetch`` alone refuse a live lease."""
        self._clear_locks()
        remote = self.push_remote or self.fetched_from
        if remote is None:
            return
        self.repo.fetch(remote, run_refspecs(self.run_id, remote))
        if self.push_remote is None:
            lease.check(self.repo, remote, self.run_id, self.lease_times)
            return
        self._fetched = True
        self.lease = lease.LegLease.take(
            self.repo, remote, self.run_id, leg=rec.leg, mark=run_mark(rec.rundir.path),
            warn=self.warn, times=self.lease_times,
        )  # fmt: skip

    def release_lease(self) -> None:
        """Give the lease back at the end of the leg, however it ended."""
        if self.lease is not None:
            self.lease.release()
            self.lease = None

    def before_leg(self, rec: Recorder) -> EventFields:
        """Compare-and-swap: note the state commit this leg starts from; refuse a moved run
        (one the remote holds commits of that this clone lacks), never one merely ahead."""
        self._clear_locks()
        self._pushed_at = self.clock()  # the push window counts from the leg's start
        self.head = self.repo.run_head(self.run_id)
        self.workspace.recorded = dict(rec.state["worktrees"])
        if self.push_remote is not None:
            if not self._fetched:
                self.repo.fetch(self.push_remote, run_refspecs(self.run_id, self.push_remote))
            self._fetched = False
            self._refuse_moved()
        if self.head is None:
            return {}
        rec.state_ref = f"commit:{self.head}"
        return {"base": self.head}

    def _refuse_moved(self) -> None:
        """MovedOn unless the remote's run branch is this clone's or behind it (the commits a
        leg killed before its push left here are then pushed with this leg's first commit)."""
        assert self.push_remote is not None
        remote = self.repo.remote_run_head(self.push_remote, self.run_id)
        if remote is None:
            return
        how = self.repo.relation(self.head, remote)
        if how in ("same", "ahead"):
            return
        here = self.head[:12] if self.head else "nothing"
        advice = (
            f"Nothing was spent. Continue from {self.push_remote}'s record with "
            f"`omg resume --fetch {self.push_remote} {self.run_id} --push {self.push_remote}`"
        )
        if how == "behind":
            raise MovedOn(
                f"run {self.run_id!r} moved on: {self.push_remote} has its branch at "
                f"{remote[:12]}, which extends this clone's {here}; another leg advanced it. "
                + advice
            )
        raise MovedOn(
            f"run {self.run_id!r} diverged: {self.push_remote} has its branch at {remote[:12]} "
            f"and this clone at {here}, each with commits the other lacks (another leg advanced "
            "it from the state this clone also advanced). " + advice + " (this clone's record "
            "is kept as a kept/ branch)"
        )

    def publish(self, state: State, run_dir: Path) -> None:
        """For a leg with nothing to run: commit what the run directory holds beyond its branch
        and push what the branch (and its lanes) hold beyond the remote's — a leg killed
        between its events and its commit, or its commit and its push, left them behind."""
        self._clear_locks()
        self.head = self.repo.run_head(self.run_id)
        if self.head is None and self.push_remote is None:
            return  # a run that never committed here is not started on a branch by a no-op
        if self.push_remote is not None:
            self.repo.fetch(self.push_remote, run_refspecs(self.run_id, self.push_remote))
            self._refuse_moved()
        legs = max(1, len(state["legs"]))
        self.head = self.repo.commit_run_dir(
            self.run_id, run_dir, f"omg {self.run_id} leg {legs}: recorded",
            expect_parent=self.head,
        )  # fmt: skip
        if self.push_remote is None:
            return
        if self.repo.remote_run_head(self.push_remote, self.run_id) == self.head:
            return
        refs = [f"refs/heads/{self.repo.run_branch(self.run_id)}"]
        lanes = {lane["branch"] for lane in state["worktrees"].values()}
        refs += [f"refs/heads/{b}" for b in sorted(lanes) if self.repo.branch_head(b)]
        self.repo.push(self.push_remote, [f"{r}:{r}" for r in refs])
        self.warn(f"pushed run {self.run_id!r} to {self.push_remote}: an earlier leg had not")

    def _clear_locks(self) -> None:
        for path in self.repo.clear_stale_locks(self.run_id):
            self.warn(f"omg: removed {path}, a lock a killed git write of run {self.run_id} left")

    def settled(self, rec: Recorder, node_id: str, verdict: str, round_: int) -> None:
        """Commit a settled node, pushed when the last push is ``push_every`` seconds old; or
        the leg's start, always pushed (the CI jobs of a run find it, and its state, there)."""
        if node_id:
            what = f"{node_id} {verdict or 'LOOPING'}" + (f" (round {round_})" if round_ else "")
        else:
            what = "started"
        self._commit(rec, f"omg {self.run_id} leg {rec.leg}: {what}", checkpoint=not node_id)

    def after_leg(self, rec: Recorder, result: LegResult) -> None:
        why = (
            f" at {result.paused_at}"
            if result.paused_at
            else (f" ({result.reason})" if result.reason and result.outcome == "paused" else "")
        )
        self._commit(rec, f"omg {self.run_id} leg {rec.leg}: {result.outcome}{why}", last=True)

    def noted(self, rec: Recorder, what: str) -> None:
        """Commit (and push) an event recorded between legs: a refusal, a supersede, a dispatch."""
        self._commit(rec, f"omg {self.run_id} leg {rec.leg}: {what}")

    def push_pending(self, rec: Recorder) -> None:
        """A leg that stopped on an error: commit and push what it settled that the remote
        lacks, so the next leg re-runs only what was in flight. A failure here is only warned
        about (the error that stopped the leg is the one reported); never while another leg
        holds the run."""
        if self.lease is not None and self.lease.lost is not None:
            return
        try:
            self._commit(rec, f"omg {self.run_id} leg {rec.leg}: stopped")
        except OmgError as exc:
            self.warn(f"warning: what this leg settled since its last push stays local ({exc})")

    def pause_ref(self, progress_seq: int) -> str | None:
        """The oldest run-branch commit whose state has seen event ``progress_seq`` (newer ones
        only add standing notes): the state a human judges at a pause, whatever refusals were
        recorded with it or on top of it."""

        found = None
        for sha in self.repo.run_log(self.run_id):
            seq = int(
                strictjson.loads(self.repo.read_run_file(self.run_id, "state.json", ref=sha))["seq"]
            )
            if seq < progress_seq:
                break
            found = sha
        return found

    def state_seq(self, ref: str) -> tuple[str, int] | None:
        """(run id, seq) of the state committed at ``ref``; None when ``ref`` is no such commit."""

        try:
            data = strictjson.loads(self.repo.read_run_file(self.run_id, "state.json", ref=ref))
        except (GitError, ValueError):
            return None
        return str(data.get("run_id", "")), int(data.get("seq", 0))

    def _commit(
        self, rec: Recorder, message: str, *, checkpoint: bool = True, last: bool = False
    ) -> None:
        """Commit the run directory; push at a checkpoint, or when the last push is
        ``push_every`` old. A pushed commit's state.json is level with its events; between
        pushes it is rewritten at most once a second (its readers fold the log's tail). The
        leg's ``last`` push carries its lease given back, after the run branch and its lanes:
        one push instead of two, and the remote moves those refs in that order."""
        if self.lease is not None and self.lease.lost is not None:
            raise MovedOn(self.lease.lost)
        push = self.push_remote is not None and (
            checkpoint or self.clock() - self._pushed_at >= self.push_every
        )
        if checkpoint or push:
            rec.flush()
        else:
            rec.flush_due()
        changed = rec.rundir.take_changes()
        message = rec.rundir.mask.text(message)  # a note's words may quote anything
        incremental = self._tracked is not None and self._tracked == self.head
        self.head = self.repo.commit_run_dir(
            self.run_id, rec.rundir.path, message, expect_parent=self.head,
            changed=changed if incremental else None,
        )  # fmt: skip
        self._tracked = self.head
        rec.state_ref = f"commit:{self.head}"
        for branch, sha in self.moved_lanes.items():
            self.repo.set_branch(branch, sha)
        if push and self.push_remote is not None:
            refs = [f"refs/heads/{self.repo.run_branch(self.run_id)}"]
            refs += [f"refs/heads/{wt.branch}" for wt in self.workspace.lanes.values()]
            refs += [f"refs/heads/{branch}" for branch in self.moved_lanes]
            given = self.lease.hand_back() if last and self.lease is not None else None
            self.repo.push(self.push_remote, [f"{r}:{r}" for r in [*refs, *filter(None, [given])]])
            if given is not None and self.lease is not None:
                self.lease.handed_back()
            self._pushed_at = self.clock()
            self.pushes += 1
        elif self.push_remote is None and self.workspace.wants_push and not self.warned:
            self.warned = True
            self.warn(
                "warning: a worktree declares push: true, but no --push REMOTE was given; "
                "its branch was committed locally and not pushed"
            )
        if push or self.push_remote is None:
            self._drop_taken()  # a note's ref goes only once a pushed commit carries it

    # -- notes: facts recorded about the run off its branch, folded in by its legs ------------

    def notes(self) -> dict[str, bytes]:
        """The notes recorded about the run and not dropped yet: note id → what it holds."""
        if self.push_remote is not None:
            found = self.repo.fetch_notes(self.push_remote, self.run_id)
        else:
            found = self.repo.local_notes(self.run_id)
        return {nid: self.repo.read_note(sha) for nid, sha in sorted(found.items())}

    def record_note(self, note_id: str, data: bytes, what: str) -> bool:
        """Record note ``note_id`` and push it without force; False when the run already has a
        note by that id (a re-run of the job that wrote it). The run branch is not touched."""
        if self.push_remote is None and note_id in self.repo.local_notes(self.run_id):
            return False
        self.repo.record_note(self.run_id, note_id, data, f"omg {self.run_id} note: {what}")
        if self.push_remote is None:
            return True
        ref = note_ref(self.run_id, note_id)
        try:
            self.repo.push(self.push_remote, [f"{ref}:{ref}"])
        except MovedOn:
            if note_id in self.repo.fetch_notes(self.push_remote, self.run_id):
                return False
            raise
        return True

    def _drop_taken(self) -> None:
        """The notes the last commit carries are on record there: drop their refs."""
        if not self.taken:
            return
        ids, self.taken = self.taken, []
        try:
            self.repo.drop_notes(self.push_remote, self.run_id, ids)
        except OmgError as exc:
            self.warn(f"warning: folded notes stay on their refs ({exc}); the next leg drops them")


def attach(
    root: Path, run_id: str, *, push: str | None, base: str, warn: Warn, tokens: Sequence[GitToken]
) -> RunCommits | None:
    """The commits of a run started or resumed in ``root``; None outside a git repository."""
    repo = open_repo(root, tokens=tokens)
    if repo is None:
        return None
    every = push_every(os.environ)
    return RunCommits(repo, root, run_id, push=push, base=base, warn=warn, push_every=every)


def fetch_run(
    root: Path,
    run_dir: Path,
    run_id: str,
    remote: str,
    *,
    warn: Warn,
    tokens: Sequence[GitToken],
    missing_ok: bool = False,
    replace: bool = False,
) -> bool:
    """Fetch a run's branches and continue from the remote's record of it.

    False (with ``missing_ok``) when the remote has no such run; else a GitError says so. When
    the remote's run branch does not merely lag this clone's, the local record it lacks (commits,
    and events the directory holds beyond them) is set aside as ``kept/…`` and the directory is
    made exactly the remote's; so the command a leg that lost a race is given continues the run.
    With ``replace`` the directory is made exactly the branch's in any case.
    """
    repo = open_repo(root, tokens=tokens)
    if repo is None:
        raise GitError(f"--fetch {remote}: {root} is not inside a git repository")
    rundir = RunDir(run_dir)
    held = run_dir.is_dir()
    if held:  # no leg of this directory writes it (or the run's refs) while it is replaced
        rundir.lock()
    try:
        if held:
            for path in repo.clear_stale_locks(run_id):
                warn(f"omg: removed {path}, a lock a killed git write of run {run_id} left")
        repo.fetch(remote, run_refspecs(run_id, remote))
        remote_head = repo.remote_run_head(remote, run_id)
        if remote_head is None:
            if missing_ok:
                return False
            raise GitError(
                f"{remote} has no branch omg/runs/{run_id}; check the run id with "
                f"`git ls-remote {remote} 'refs/heads/omg/runs/*'`"
            )
        local_head = repo.run_head(run_id)
        if repo.relation(local_head, remote_head) in ("behind", "diverged"):
            kept = repo.keep_unpublished(remote, run_id, run_dir)
            if kept is not None:
                warn(
                    f"this clone's record of run {run_id!r} is not on {remote}, which moved on; "
                    f"it is kept locally as {kept}, and the run continues from {remote}'s"
                )
            repo.adopt_remote_run(remote, run_id)
            repo.restore_run_dir(run_id, run_dir, prune=True)
            warn(f"restored run {run_id!r} from {remote} at {remote_head[:12]}")
        elif replace:
            repo.restore_run_dir(run_id, run_dir, prune=True)
        elif not (run_dir / "state.json").exists() or _behind(run_dir, repo, run_id):
            repo.restore_run_dir(run_id, run_dir)
            warn(f"restored run {run_id!r} from {remote} at {remote_head[:12]}")
        return True
    finally:
        rundir.close()


def _behind(run_dir: Path, repo: RunRepo, run_id: str) -> bool:
    """The local run directory holds fewer events than the run branch."""

    try:
        local = RunDir(run_dir).read_state()
        branch = strictjson.loads(repo.read_run_file(run_id, "state.json"))
    except (GitError, ValueError):
        return True
    return int(branch.get("seq", 0)) > local["seq"]


def clean_run(root: Path, run_id: str, *, remote: str | None) -> list[str]:
    repo = open_repo(root)
    if repo is None:
        raise GitError(f"{root} is not inside a git repository; nothing to clean")
    return repo.clean(run_id, remote=remote)
