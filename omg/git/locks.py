"""Stale locks: the ``*.lock`` files a killed git write leaves on a run's own refs."""

from __future__ import annotations

import glob
from pathlib import Path

import pygit2

from omg.git.names import common_dir, owned_refs, run_dir


def clear_stale(repo: pygit2.Repository, root: Path, run_id: str) -> list[str]:
    """Remove the lock files on the run's own refs (and its lanes' index locks) — what a git
    write killed halfway leaves, and what makes every later write of that ref fail; the paths
    removed. Only the leg holding the run's leg lock may call this: no other writer of those
    refs can be alive."""
    common = common_dir(repo)
    found = [
        path
        for pattern in owned_refs(run_id)
        for path in glob.glob(str(common / f"{pattern}.lock"))
    ]
    lanes = run_dir(root, run_id).resolve()
    for admin in (common / "worktrees").glob("*"):
        try:
            gitdir = Path((admin / "gitdir").read_text().strip()).resolve()
        except OSError:
            continue
        if gitdir.is_relative_to(lanes) and (admin / "index.lock").exists():
            found.append(str(admin / "index.lock"))
    for path in found:
        Path(path).unlink(missing_ok=True)
    return sorted(found)
