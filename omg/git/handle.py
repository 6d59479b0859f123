"""A handle on a run repository: the pygit2 repository behind one lock, the identity commits
carry, and the way to its remotes (push, fetch) — what each group of RunRepo's operations
builds on."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import pygit2

from omg.dotomg import NAME, ensure_ignored
from omg.git import remote as remotes
from omg.git import runbranch
from omg.git.edge import FIX, translated
from omg.git.names import LEASES, lease_tracking
from omg.git.remote import GitToken


class Handle:
    """What every operation of a ``RunRepo`` holds; each takes ``_lock`` first."""

    def __init__(
        self, repo: pygit2.Repository, env: Mapping[str, str], tokens: Sequence[GitToken]
    ) -> None:
        self._repo = repo
        self._env = env
        self._tokens = tokens
        self._seen = runbranch.TreeCache()  # what this process's commits already hashed
        self._lock = threading.RLock()
        self.root = Path(repo.workdir or ".").resolve()

    def push(self, remote: str, refspecs: list[str]) -> None:
        """Push refspecs (``ref`` or ``src:dst``) to a remote name, URL or path; never forcing.

        A lost race (the remote ref moved on) raises GitError saying another leg advanced it.
        """
        with self._lock, translated(f"pushing to {remote}", FIX):
            remotes.push(self._repo, remote, refspecs, self._tokens)

    def fetch(self, remote: str, refspecs: list[str]) -> None:
        """Fetch refspecs into ``refs/remotes/<remote>/``; local branches are never written."""
        with self._lock, translated(f"fetching from {remote}", FIX):
            tracking = remotes.tracking_name(self._repo, remote)
            for src in (spec.partition(":")[0] for spec in refspecs):
                if src.startswith(LEASES):  # a lease deleted there is read from no old copy
                    stale = self._repo.references.get(
                        lease_tracking(tracking, src.removeprefix(LEASES))
                    )
                    if stale is not None:
                        stale.delete()
            remotes.fetch(self._repo, remote, refspecs, self._tokens)

    def has_commit(self, sha: str) -> bool:
        """Whether the object database holds commit ``sha`` (a shallow clone may not)."""
        with self._lock, translated(f"looking up {sha[:12]} in {self.root}", FIX):
            try:
                return isinstance(self._repo.get(sha), pygit2.Commit)
            except (ValueError, KeyError):
                return False

    def _ignore_omg(self, run_dir: Path) -> None:
        if run_dir.resolve().is_relative_to(self.root / ".omg"):
            ensure_ignored(self.root / NAME)  # a run dir must never show in `git status`

    def _refs_under(self, prefix: str) -> dict[str, str]:
        return {
            name.removeprefix(prefix): str(self._repo.references[name].target)
            for name in self._repo.references
            if name.startswith(prefix)
        }
