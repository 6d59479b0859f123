"""Git runs: a leg's commits to `omg/runs/<id>`, its pushes, fetches and worktree lanes.

This module decides *when* to commit and push; `omg.git` (the only pygit2 importer) does it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from omg.errors import GitError, MovedOn, OmgError
from omg.git import RunRepo, Worktree, open_repo
from omg.git.names import note_ref, run_refspecs
from omg.git.remote import GitToken
from omg.graph.model import Node
from omg.leg.workspace import LocalWorkspace
from omg.schedule import LegResult
from omg.state import LaneRecord
from omg.state.events import EventFields
from omg.state.recorder import Recorder
from omg.state.store import RunDir

Warn = Callable[[str], None]


class GitWorkspace(LocalWorkspace):
    """Worktree lanes as real pygit2 worktrees; everything else as the local workspace."""

    def __init__(self, repo: RunRepo, root: Path, run_id: str, base: str) -> None:
        super().__init__(root, run_id)
        self.repo = repo
        self.base = base
        self.lanes: dict[str, Worktree] = {}
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
                if rec is not None:
                    wt = self.repo.restore_worktree(self.run_id, name, rec["commit"], branch=branch)
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


class RunCommits:
    """Commits the run directory after every settled node and at the end of the leg."""

    def __init__(
        self, repo: RunRepo, root: Path, run_id: str, *, push: str | None, base: str, warn: Warn
    ) -> None:
        self.repo = repo
        self.run_id = run_id
        self.push_remote = push
        self.warn = warn
        self.workspace = GitWorkspace(repo, root, run_id, base)
        self.head: str | None = None
        self.warned = False
        #: lane branch → the commit a fold takes in from its matrix jobs (pushed with the run)
        self.moved_lanes: dict[str, str] = {}
        #: notes this leg folded in: their refs are dropped once a push carries them
        self.taken: list[str] = []

    def before_leg(self, rec: Recorder) -> EventFields:
        """Compare-and-swap: note the state commit this leg starts from; refuse a moved run."""
        self.head = self.repo.run_head(self.run_id)
        self.workspace.recorded = dict(rec.state["worktrees"])
        if self.push_remote is not None:
            self.repo.fetch(self.push_remote, run_refspecs(self.run_id))
            remote = self.repo.remote_run_head(self.push_remote, self.run_id)
            if remote is not None and remote != self.head:
                raise MovedOn(
                    f"run {self.run_id!r} moved on: {self.push_remote} has its branch at "
                    f"{remote[:12]}, but this leg would start from "
                    f"{self.head[:12] if self.head else 'nothing'}; another leg advanced it. "
                    "Nothing was spent. Fetch and continue with "
                    f"`omg resume --fetch {self.push_remote} {self.run_id}`"
                )
        if self.head is None:
            return {}
        rec.state_ref = f"commit:{self.head}"
        return {"base": self.head}

    def settled(self, rec: Recorder, node_id: str, verdict: str, round_: int) -> None:
        if node_id:
            what = f"{node_id} {verdict or 'LOOPING'}" + (f" (round {round_})" if round_ else "")
        else:
            what = "started"
        self._commit(rec, f"omg {self.run_id} leg {rec.leg}: {what}")

    def after_leg(self, rec: Recorder, result: LegResult) -> None:
        why = (
            f" at {result.paused_at}"
            if result.paused_at
            else (f" ({result.reason})" if result.reason and result.outcome == "paused" else "")
        )
        self._commit(rec, f"omg {self.run_id} leg {rec.leg}: {result.outcome}{why}")

    def noted(self, rec: Recorder, what: str) -> None:
        """Commit (and push) an event recorded between legs: a refusal, a supersede, a dispatch."""
        self._commit(rec, f"omg {self.run_id} leg {rec.leg}: {what}")

    def pause_ref(self, progress_seq: int) -> str | None:
        """The oldest run-branch commit whose state has seen event ``progress_seq`` (newer ones
        only add standing notes): the state a human judges at a pause, whatever refusals were
        recorded with it or on top of it."""
        import json

        found = None
        for sha in self.repo.run_log(self.run_id):
            seq = int(
                json.loads(self.repo.read_run_file(self.run_id, "state.json", ref=sha))["seq"]
            )
            if seq < progress_seq:
                break
            found = sha
        return found

    def state_seq(self, ref: str) -> tuple[str, int] | None:
        """(run id, seq) of the state committed at ``ref``; None when ``ref`` is no such commit."""
        import json

        try:
            data = json.loads(self.repo.read_run_file(self.run_id, "state.json", ref=ref))
        except (GitError, ValueError):
            return None
        return str(data.get("run_id", "")), int(data.get("seq", 0))

    def _commit(self, rec: Recorder, message: str) -> None:
        rec.flush()  # the commit holds state.json as the fold of the events it holds
        message = rec.rundir.mask.text(message)  # a note's words may quote anything
        self.head = self.repo.commit_run_dir(
            self.run_id, rec.rundir.path, message, expect_parent=self.head
        )
        rec.state_ref = f"commit:{self.head}"
        for branch, sha in self.moved_lanes.items():
            self.repo.set_branch(branch, sha)
        if self.push_remote is not None:
            refs = [f"refs/heads/{self.repo.run_branch(self.run_id)}"]
            refs += [f"refs/heads/{wt.branch}" for wt in self.workspace.lanes.values()]
            refs += [f"refs/heads/{branch}" for branch in self.moved_lanes]
            self.repo.push(self.push_remote, [f"{r}:{r}" for r in refs])
        elif self.workspace.wants_push and not self.warned:
            self.warned = True
            self.warn(
                "warning: a worktree declares push: true, but no --push REMOTE was given; "
                "its branch was committed locally and not pushed"
            )
        self._drop_taken()

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
    return RunCommits(repo, root, run_id, push=push, base=base, warn=warn)


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
    """Fetch a run's branches and restore its directory when it is missing or behind.

    False (with ``missing_ok``) when the remote has no such run; else a GitError says so.
    With ``replace`` (after this process lost a race) a local branch that diverged is set
    aside as ``kept/…`` and the directory is made exactly the remote's.
    """
    repo = open_repo(root, tokens=tokens)
    if repo is None:
        raise GitError(f"--fetch {remote}: {root} is not inside a git repository")
    repo.fetch(remote, run_refspecs(run_id))
    remote_head = repo.remote_run_head(remote, run_id)
    if remote_head is None:
        if missing_ok:
            return False
        raise GitError(
            f"{remote} has no branch omg/runs/{run_id}; check the run id with "
            f"`git ls-remote {remote} 'refs/heads/omg/runs/*'`"
        )
    local_head = repo.run_head(run_id)
    if local_head != remote_head:
        kept = repo.set_aside_diverged(remote, run_id) if replace else None
        if kept is not None:
            warn(f"this leg's unpublished record of run {run_id!r} is kept locally as {kept}")
        repo.adopt_remote_run(remote, run_id)
    if replace:
        repo.restore_run_dir(run_id, run_dir, prune=True)
    elif not (run_dir / "state.json").exists() or _behind(run_dir, repo, run_id):
        repo.restore_run_dir(run_id, run_dir)
        warn(f"restored run {run_id!r} from {remote} at {remote_head[:12]}")
    return True


def _behind(run_dir: Path, repo: RunRepo, run_id: str) -> bool:
    """The local run directory holds fewer events than the run branch."""
    import json

    try:
        local = RunDir(run_dir).read_state()
        branch = json.loads(repo.read_run_file(run_id, "state.json"))
    except (GitError, ValueError):
        return True
    return int(branch.get("seq", 0)) > local["seq"]


def clean_run(root: Path, run_id: str, *, remote: str | None) -> list[str]:
    repo = open_repo(root)
    if repo is None:
        raise GitError(f"{root} is not inside a git repository; nothing to clean")
    return repo.clean(run_id, remote=remote)
