"""Note refs: one note about a run as a commit of a single file, on a ref of its own."""

from __future__ import annotations

import pygit2
from pygit2.enums import FileMode

from omg.errors import GitError

FILE = "note.json"


def write(
    repo: pygit2.Repository,
    ref: str,
    data: bytes,
    message: str,
    *,
    author: pygit2.Signature,
    committer: pygit2.Signature,
) -> str:
    """Commit ``data`` as ``note.json`` (no parents: a note stands alone) and point ``ref`` at
    it. The ref is local; pushing it without force is what makes a note written once."""
    builder = repo.TreeBuilder()
    builder.insert(FILE, repo.create_blob(data), FileMode.BLOB)
    oid = repo.create_commit(None, author, committer, message, builder.write(), [])
    repo.references.create(ref, oid, force=True)
    return str(oid)


def read(repo: pygit2.Repository, sha: str) -> bytes:
    """The ``note.json`` of note commit ``sha``; GitError when it holds no such file."""
    commit = repo[sha].peel(pygit2.Commit)
    try:
        blob = commit.tree[FILE]
    except KeyError:
        raise GitError(f"note {sha[:12]} holds no {FILE}") from None
    if not isinstance(blob, pygit2.Blob):
        raise GitError(f"{FILE} of note {sha[:12]} is not a file")
    return bytes(blob.data)
