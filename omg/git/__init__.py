"""omg's git edge: run branches, remotes and worktrees; the only package importing pygit2."""

from __future__ import annotations

from omg.git.repo import RunRepo, open_repo
from omg.git.worktrees import Checkout

__all__ = ["Checkout", "RunRepo", "open_repo"]
