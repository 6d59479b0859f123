"""A run repository's remotes: the run branches a remote holds, fetched and adopted; how a local
run branch stands to its remote copy, and what it recorded that the remote lacks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from omg.errors import GitError
from omg.git import remote as remotes
from omg.git import runbranch, runscan
from omg.git.edge import FIX, translated
from omg.git.identity import signature
from omg.git.names import HEADS, head, remote_run_ref

#: How a local run branch stands to its remote copy.
Relation = Literal["same", "ahead", "behind", "diverged"]


if TYPE_CHECKING:
    from omg.git.handle import Handle
else:
    Handle = object  # RunRepo derives from Handle itself: the operations need not import it


class RemoteOps(Handle):
    """The run branches of a remote, and a local run branch against them."""

    def remote_names(self) -> list[str]:
        """The remotes this repository names (``origin``, …)."""
        with self._lock, translated("listing the repository's remotes", FIX):
            return [name for name in self._repo.remotes.names() if name]

    def fetch_commit(self, remote: str, sha: str, ref: str) -> bool:
        """Whether commit ``sha`` is here, fetched when it is not: by its id (GitHub serves any
        commit its refs reach), else by ``ref``, which holds it. False when neither brings it."""
        if self.has_commit(sha):
            return True
        for spec in (f"{sha}:refs/remotes/{remote}/commits/{sha}", ref):
            try:
                self.fetch(remote, [spec])
            except GitError:
                continue
            if self.has_commit(sha):
                return True
        return False

    def fetch_runs(self, remote: str, prefix: str = "") -> dict[str, str]:
        """Fetch every run branch of ``remote`` (whose id starts with ``prefix``) into
        ``refs/remotes/`` (no local branch is written); then its run branches as this
        repository holds them, id → commit."""
        self.fetch(remote, [f"{HEADS}omg/runs/{prefix}*"])
        return self.remote_runs(remote)

    def remote_run_head(self, remote: str, run_id: str) -> str | None:
        """After a fetch or push: ``refs/remotes/<remote>/omg/runs/<run_id>``, or None.

        For a URL or path remote the namespace is ``omg-<hash of the URL>`` instead.
        """
        with self._lock, translated(f"reading {remote}'s omg/runs/{run_id}", FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            return head(self._repo, remote_run_ref(tracking, run_id))

    def remote_runs(self, remote: str) -> dict[str, str]:
        """After a fetch: every run branch of ``remote`` this repository holds, id → commit."""
        with self._lock, translated(f"listing {remote}'s run branches", FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            prefix = remote_run_ref(tracking, "x")[:-1]
            return {
                name.removeprefix(prefix): str(self._repo.references[name].target)
                for name in sorted(self._repo.references)
                if name.startswith(prefix) and "/" not in name.removeprefix(prefix)
            }

    def remote_ref(self, remote: str, run_id: str) -> str:
        """The remote-tracking ref of ``remote``'s run branch ``run_id`` (fetched or not)."""
        with self._lock, translated(f"naming {remote}'s omg/runs/{run_id}", FIX):
            return remote_run_ref(remotes.tracking_name(self._repo, remote), run_id)

    def run_records(self, remote: str | None = None) -> list[runscan.RunBlobs]:
        """Every run's state.json and event log as its branch holds them — the local run
        branches, or ``remote``'s as last fetched — read from the trees; nothing is written."""
        with self._lock, translated("reading the run branches", FIX):
            heads = runscan.local_heads(self._repo) if remote is None else self.remote_runs(remote)
            return list(runscan.read_all(self._repo, heads))

    def adopt_remote_run(self, remote: str, run_id: str) -> str:
        """Fast-forward the local run branch to the fetched remote one; return its head.

        A local branch ahead of the remote is kept as it is. Diverged histories raise
        GitError: omg never rewrites a run's history.
        """
        with self._lock, translated(f"adopting {remote}'s omg/runs/{run_id}", FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            theirs = head(self._repo, remote_run_ref(tracking, run_id))
            if theirs is None:
                raise GitError(f"{remote} has no omg/runs/{run_id} here; fetch it first")
            return runbranch.adopt(self._repo, run_id, theirs, remote)

    def relation(self, ours: str | None, theirs: str) -> Relation:
        """How the local run branch at ``ours`` stands to the remote's at ``theirs``: the same,
        ahead (it extends theirs: unpushed commits), behind, or diverged (each has commits the
        other lacks)."""
        with self._lock, translated(f"comparing {theirs[:12]} in {self.root}", FIX):
            if ours == theirs:
                return "same"
            if ours is None or self._repo.descendant_of(theirs, ours):
                return "behind"
            if self._repo.descendant_of(ours, theirs):
                return "ahead"
            return "diverged"

    def keep_unpublished(self, remote: str, run_id: str, run_dir: Path) -> str | None:
        """Before the remote's run branch is adopted over a local copy it does not extend: what
        this clone recorded that the remote lacks — its run branch's own commits and any events
        the run directory holds beyond them — moved to ``kept/omg-run-<id>-<sha7>``; the name,
        or None when there was nothing to keep."""
        with self._lock, translated(f"keeping the local record of run {run_id}", FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            theirs = head(self._repo, remote_run_ref(tracking, run_id))
            if theirs is None:
                return None
            self._ignore_omg(run_dir)
            return runbranch.keep(
                self._repo, run_id, run_dir, theirs,
                author=signature(self._repo, self._env, "AUTHOR"),
                committer=signature(self._repo, self._env, "COMMITTER"),
                seen=self._seen,
            )  # fmt: skip
