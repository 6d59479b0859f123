"""The lease ref: one small file, ``lease.json``, committed in a chain on a ref of its own.

Each renewal is a child of the commit it replaces, so pushing it is a fast-forward of exactly
the value read: a compare-and-swap on the remote, as for the run branch, and never a force.
"""

from __future__ import annotations

import pygit2
from pygit2.enums import FileMode

from omg.git.names import head

FILE = "lease.json"
#: Bytes of a lease read from a remote; anything longer is not a lease omg wrote.
LIMIT = 16 << 10


def read(repo: pygit2.Repository, ref: str) -> tuple[str, bytes] | None:
    """(commit, ``lease.json`` bytes) at ``ref``; b"" when the commit holds no such file (or
    one too long to be a lease); None when the ref does not exist."""
    sha = head(repo, ref)
    if sha is None:
        return None
    try:
        entry = repo[sha].peel(pygit2.Commit).tree[FILE]
        blob = repo[entry.id]
    except (KeyError, ValueError, pygit2.GitError):
        return sha, b""
    if not isinstance(blob, pygit2.Blob) or blob.size > LIMIT:
        return sha, b""
    return sha, blob.data


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
    builder = repo.TreeBuilder()
    builder.insert(FILE, repo.create_blob(data), FileMode.BLOB)
    parents = [parent] if parent is not None else []
    oid = repo.create_commit(None, author, committer, message, builder.write(), parents)
    repo.references.create(ref, oid, force=True)  # local, ours: the push is the swap
    return str(oid)
