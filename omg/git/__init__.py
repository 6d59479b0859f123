"""omg's git edge: run branches, remotes and worktrees; the only package importing pygit2.

Tokens and the GitHub host are handed in.

- ``repo``: ``RunRepo``, the one object a leg holds — the operations of each concern gathered on
  a ``handle`` from ``branchops``, ``remoteops``, ``recordops`` and ``worktrees``.
- ``handle``: the repository behind one lock, the commit identity, push and fetch.
- ``branchops``: the run branches here.
- ``remoteops``: what a remote holds, and a local run branch against it.
- ``recordops``: the lease, fan-out records, notes, spend books and waits.
- ``names``: the base the others build on — every ref name, a ref's commit, where checkouts
  live, the common git directory.
- ``edge``: pygit2 failures → ``GitError``.
- ``identity``: who commits.
- ``runbranch``: a run directory as a tree — scanned, or the last commit's tree updated at the
  paths a leg changed.
- ``worktrees``: managed checkouts; ``WorktreeOps``, a ``RunRepo``'s operations on them.
- ``unfinished``: a checkout a kill left half made — adopted when finished, else cleared, or
  refused when it holds what its branch does not.
- ``remote``: push / fetch, never forcing.
- ``locks``: stale ``*.lock`` files.
- ``lease``: the lease's file, committed by ``onefile``; ``notes``: one-file commits on refs
  of their own.
- ``onefile``: the spend books, waits and lease — one-file commits chained on refs of their
  own, each update a compare-and-swap.
- ``prune``: omg's refs here or on a remote with their commits and times, mirrored by a pruning
  fetch; the branches that hold a lane's work; removal only of a ref still where it was judged
  — checked under the ref's lock here and in a bare remote on this machine, at push negotiation
  and by receive-pack for a server.
- ``treefiles``: a commit's tree read as files — a pull request's graph and fragments, from its
  base and its head.
- ``runscan``: every run branch's state.json and event log read straight from its tree, for
  ``omg stats``.
- ``pack``: a leg's new objects as a git pack — what the tips reach down to the old commits and
  the base, built deterministically; and read back by omg's own parser: every id computed,
  sizes bounded before inflating, no duplicate, no thin delta.
- ``quarantine``: a hand-off's objects held in a scratch repository that sees the real one's
  objects; walked and read there while checked, then carried in, and the refs moved by
  compare-and-swap and pushed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omg.git.repo import RunRepo, open_repo
    from omg.git.worktrees import Checkout

__all__ = ["Checkout", "RunRepo", "open_repo"]


def __getattr__(name: str) -> object:
    """``RunRepo``, ``open_repo`` and ``Checkout``, imported when first asked for: a module of
    the package that needs no repository (``identity``, ``names``) loads without pygit2."""
    if name in ("RunRepo", "open_repo"):
        from omg.git import repo

        return getattr(repo, name)
    if name == "Checkout":
        from omg.git import worktrees

        return worktrees.Checkout
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
