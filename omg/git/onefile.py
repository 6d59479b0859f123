"""One-file records on refs of their own, each update a child of the commit it replaces: the
spend books (``spend.json``), the waits (``wait.json``) and the lease (``lease.json``).
Pushing a child of exactly the commit read is a compare-and-swap on the remote, never a force."""

from __future__ import annotations

import pygit2
from pygit2.enums import FileMode

from omg.errors import Unreadable
from omg.git.names import head

#: Bytes read back at most; a longer file is not one omg wrote (Unreadable).
LIMIT = 16 << 20


def read(
    repo: pygit2.Repository, ref: str, name: str, limit: int = LIMIT
) -> tuple[str, bytes] | None:
    """(commit, the file's bytes) at ``ref``; None when the ref does not exist. A ref whose
    commit holds no file ``name`` omg can read — none, a directory, a submodule, one longer
    than ``limit`` — is Unreadable (damage is never read as an empty record)."""
    sha = head(repo, ref)
    if sha is None:
        return None
    try:
        tree = repo[sha].peel(pygit2.Commit).tree
    except (KeyError, ValueError, pygit2.GitError):
        raise Unreadable(ref, sha, "points at no commit") from None
    try:
        entry = tree[name]
    except KeyError:
        raise Unreadable(ref, sha, f"holds no {name}") from None
    if entry.filemode == FileMode.COMMIT:
        raise Unreadable(ref, sha, f"holds {name} as a submodule, not a file")
    if entry.filemode == FileMode.TREE:
        raise Unreadable(ref, sha, f"holds {name} as a directory, not a file")
    if entry.filemode == FileMode.LINK:
        raise Unreadable(ref, sha, f"holds {name} as a symbolic link, not a file")
    blob = repo.get(entry.id)
    if not isinstance(blob, pygit2.Blob):
        raise Unreadable(ref, sha, f"holds a {name} whose content is missing")
    if blob.size > limit:
        raise Unreadable(
            ref, sha, f"holds a {name} of {blob.size:,} bytes, past the {limit:,} omg reads"
        )
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
