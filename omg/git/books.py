"""One-file records on refs of their own, each update a child of the commit it replaces: the
spend books (``spend.json``), the waits (``wait.json``) and the lease (``lease.json``).
Pushing a child of exactly the commit read is a compare-and-swap on the remote, never a force."""

from __future__ import annotations

import pygit2
from pygit2.enums import FileMode

from omg.git.names import head

#: Bytes read back at most; a longer file is returned cut to nothing (the caller refuses it).
LIMIT = 16 << 20


def read(
    repo: pygit2.Repository, ref: str, name: str, limit: int = LIMIT
) -> tuple[str, bytes] | None:
    """(commit, the file's bytes) at ``ref``; b"" when the commit holds no such file (or one
    longer than ``limit``); None when the ref does not exist."""
    sha = head(repo, ref)
    if sha is None:
        return None
    try:
        entry = repo[sha].peel(pygit2.Commit).tree[name]
        blob = repo[entry.id]
    except (KeyError, ValueError, pygit2.GitError):
        return sha, b""
    if not isinstance(blob, pygit2.Blob) or blob.size > limit:
        return sha, b""
    return sha, blob.data


def write(
    repo: pygit2.Repository,
    ref: str | None,
    name: str,
    data: bytes,
    message: str,
    *,
    parent: str | None,
    author: pygit2.Signature,
    committer: pygit2.Signature,
) -> str:
    """Commit ``data`` as file ``name`` on top of ``parent``; point the local ``ref`` at it
    when one is given (else the caller swaps it in: ``swap_local``)."""
    builder = repo.TreeBuilder()
    builder.insert(name, repo.create_blob(data), FileMode.BLOB)
    parents = [parent] if parent is not None else []
    oid = repo.create_commit(None, author, committer, message, builder.write(), parents)
    if ref is not None:
        repo.references.create(ref, oid, force=True)  # local, ours: the push is the swap
    return str(oid)


def swap_local(repo: pygit2.Repository, ref: str, new: str, old: str | None) -> bool:
    """Point the local ``ref`` at ``new`` if it still holds ``old`` (None: absent); False when
    it moved meanwhile (a book kept in this repository alone, no remote)."""
    current = head(repo, ref)
    if current != old:
        return False
    repo.references.create(ref, new, force=True)
    return True
