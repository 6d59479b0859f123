"""A run repository's run branches here: a run directory committed, restored and read; a
commit's parents and files; a branch moved; the locks a killed git write left, cleared."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from omg.git import locks, runbranch
from omg.git.edge import FIX, translated
from omg.git.identity import signature
from omg.git.names import HEADS, head, run_ref
from omg.git.treefiles import TreeFiles

if TYPE_CHECKING:
    from omg.git.handle import Handle
else:
    Handle = object  # RunRepo derives from Handle itself: the operations need not import it


class BranchOps(Handle):
    """The run branch of each run, and the commits and branches a leg reads or moves."""

    def run_branch(self, run_id: str) -> str:
        """``omg/runs/<run_id>``: the branch the run's directory is committed to."""
        return run_ref(run_id).removeprefix(HEADS)

    def run_head(self, run_id: str) -> str | None:
        """The commit the local run branch is at, or None when it does not exist."""
        with self._lock, translated(f"reading omg/runs/{run_id} in {self.root}", FIX):
            return head(self._repo, run_ref(run_id))

    def branch_head(self, branch: str) -> str | None:
        """The commit local ``branch`` (e.g. a lane's) is at, or None when it does not exist."""
        with self._lock, translated(f"reading {branch} in {self.root}", FIX):
            return head(self._repo, HEADS + branch)

    def run_log(self, run_id: str, limit: int = 50) -> list[str]:
        """The run branch's commits, newest first, along first parents (at most ``limit``)."""
        with self._lock, translated(f"reading the history of omg/runs/{run_id}", FIX):
            found = runbranch.resolve(self._repo, run_id, None)
            out: list[str] = []
            while found is not None and len(out) < limit:
                out.append(str(found.id))
                found = found.parents[0] if found.parents else None
            return out

    def commit_run_dir(
        self,
        run_id: str,
        run_dir: Path,
        message: str,
        *,
        expect_parent: str | None,
        changed: Collection[str] | None = None,
    ) -> str:
        """Commit ``run_dir`` as the run branch's whole tree; return the branch head.

        ``leg.lock`` and ``*.tmp*`` files are left out. An unchanged tree commits nothing.
        With ``expect_parent`` (a full sha) the branch must still be there (compare-and-swap).
        With ``changed`` (the paths written or removed since the branch's head was committed
        from this directory) the tree is the head's with those paths updated: no directory is
        scanned; without it, the directory is scanned whole.
        """
        with self._lock, translated(f"committing run {run_id} in {self.root}", FIX):
            self._ignore_omg(run_dir)
            return runbranch.commit(
                self._repo, run_id, run_dir, message, expect_parent=expect_parent,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
                seen=self._seen, changed=changed,
            )  # fmt: skip

    def restore_run_dir(
        self, run_id: str, run_dir: Path, *, ref: str | None = None, prune: bool = False
    ) -> str | None:
        """Write the run branch's (or ``ref``'s) files into ``run_dir``; the commit, or None.

        Each file is replaced atomically; unchanged files are not rewritten. With ``prune``
        files the commit does not hold are removed, so the directory mirrors it exactly.
        """
        with self._lock, translated(f"restoring run {run_id} into {run_dir}", FIX):
            self._ignore_omg(run_dir)
            return runbranch.restore(self._repo, run_id, run_dir, ref, prune=prune)

    def read_run_file(self, run_id: str, path: str, *, ref: str | None = None) -> str:
        """One file of the run branch (or ``ref``) as text, e.g. ``state.json``."""
        with self._lock, translated(f"reading {path} of run {run_id}", FIX):
            return runbranch.read_file(self._repo, run_id, path, ref)

    def read_run_log(self, run_id: str, *, ref: str | None = None) -> str:
        """The event log of the run branch (or ``ref``) as text: events.jsonl, then the chunks
        of events/ in order."""
        with self._lock, translated(f"reading the event log of run {run_id}", FIX):
            return runbranch.read_log(self._repo, run_id, ref)

    def files_at(self, sha: str) -> TreeFiles:
        """Commit ``sha``'s tree as files (a graph loaded from it reads nothing on disk)."""
        with self._lock, translated(f"reading commit {sha[:12]} in {self.root}", FIX):
            return TreeFiles(self._repo, sha)

    def parents(self, sha: str) -> list[str]:
        """The parents of commit ``sha``, first parent first."""
        with self._lock, translated(f"reading commit {sha[:12]}", FIX):
            return [str(p) for p in self._repo[sha].peel(pygit2.Commit).parent_ids]

    def copy_changes(self, run_dir: Path, old: str, new: str, *, skip: frozenset[str]) -> list[str]:
        """Into ``run_dir``: the files commit ``new`` changed since ``old`` (not ``skip``)."""
        with self._lock, translated(f"taking in {new[:12]} into {run_dir}", FIX):
            return runbranch.copy_changes(self._repo, run_dir, old, new, skip)

    def set_branch(self, branch: str, sha: str) -> None:
        """Create or fast-forward local ``branch`` to ``sha`` (a lane a matrix job advanced)."""
        with self._lock, translated(f"moving {branch} to {sha[:12]}", FIX):
            runbranch.set_branch(self._repo, branch, sha)

    def clear_stale_locks(self, run_id: str) -> list[str]:
        """Remove the lock files a killed git write left on the run's own refs (and its lanes'
        index locks); the paths removed. Only for the leg holding the run's leg lock."""
        with self._lock, translated(f"clearing stale locks of run {run_id}", FIX):
            return locks.clear_stale(self._repo, self.root, run_id)
