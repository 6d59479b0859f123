"""The run repository: the one object the engine holds to keep a run in git, its operations
gathered from their concerns (``branchops``, ``remoteops``, ``recordops``, ``worktrees``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pygit2

from omg.git.branchops import BranchOps
from omg.git.edge import FIX, translated
from omg.git.handle import Handle
from omg.git.recordops import RecordOps
from omg.git.remote import GitToken
from omg.git.remoteops import RemoteOps
from omg.git.worktrees import WorktreeOps


def open_repo(
    start: Path, *, env: Mapping[str, str] | None = None, tokens: Sequence[GitToken] = ()
) -> RunRepo | None:
    """The repository enclosing ``start`` (with a working tree), or None outside one.

    ``env`` supplies the commit identity (``GIT_AUTHOR_*``/``GIT_COMMITTER_*``); it defaults
    to ``os.environ``. ``tokens`` are what push and fetch may offer an HTTPS remote, each
    bound to its host (``omg.github.git_tokens`` picks them from a workflow's environment).
    """
    with translated(f"opening the git repository around {start}", FIX):
        found = pygit2.discover_repository(str(start))
        if found is None:
            return None
        repo = pygit2.Repository(found)
    if repo.is_bare or repo.workdir is None:
        return None
    return RunRepo(repo, os.environ if env is None else env, tokens)


class RunRepo(BranchOps, RemoteOps, RecordOps, WorktreeOps, Handle):
    """A git repository holding runs: run branches, remotes and managed worktrees.

    Every method leaves the user's HEAD, index and working tree alone, and raises only
    GitError. Calls are serialised, so the engine may share one RunRepo across threads.
    """

    def __repr__(self) -> str:
        return f"RunRepo({str(self.root)!r})"
