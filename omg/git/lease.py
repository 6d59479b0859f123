"""The lease ref: one small file, ``lease.json``, committed in a chain on a ref of its own.

Each renewal is a child of the commit it replaces, so pushing it is a fast-forward of exactly
the value read: a compare-and-swap on the remote, as for the run branch, and never a force.
"""

from __future__ import annotations

import pygit2

from omg.git import onefile

FILE = "lease.json"
#: Bytes of a lease read from a remote; anything longer is not a lease omg wrote.
LIMIT = 16 << 10


def read(repo: pygit2.Repository, ref: str) -> tuple[str, bytes] | None:
    """(commit, ``lease.json`` bytes) at ``ref``; b"" when the commit holds no such file (or
    one too long to be a lease); None when the ref does not exist."""
    return onefile.read(repo, ref, FILE, LIMIT)


def write(
    repo: pygit2.Repository,
    ref: str,
    data: bytes,
    message: str,
    *,
    parent: str | None,
    author: pygit2.Signature,
    committer: pygit2.Signature,
) -> str:
    """Commit ``data`` as ``lease.json`` on top of ``parent`` and point the local ``ref`` at it."""
    return onefile.write(
        repo, ref, FILE, data, message, parent=parent, author=author, committer=committer
    )
