"""A hand-off pack's objects held aside: written into a scratch repository that sees the real
one's objects but never writes to it, walked and read there while they are checked, and only
then carried into the real repository, whose refs move by compare-and-swap and are pushed.

The scratch repository is git's quarantine for a push (receive-pack keeps incoming objects
apart until its hooks pass): nothing a refused pack holds ever reaches the repository.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, ObjectType

from omg.errors import GitError
from omg.git import remote as remotes
from omg.git.edge import translated
from omg.git.pack import PackObject, new_commits, new_objects
from omg.git.remote import GitToken

_TYPES = {
    "commit": ObjectType.COMMIT, "tree": ObjectType.TREE,
    "blob": ObjectType.BLOB, "tag": ObjectType.TAG,
}  # fmt: skip
FIX = "check the repository with `git fsck`; nothing of the hand-off was written"


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree: its path ("/"-joined, as the tree names it), mode and object."""

    path: str
    mode: int
    oid: str


@dataclass(frozen=True)
class RefMove:
    """A ref to move from ``old`` (None: it must not exist yet) to ``new``."""

    ref: str
    old: str | None
    new: str


class Quarantine:
    """The objects of one pack beside the repository at ``repo_path``."""

    def __init__(self, repo_path: Path, objects: Sequence[PackObject]) -> None:
        with translated(f"setting aside a hand-off's objects for {repo_path}", FIX):
            self._real = pygit2.Repository(str(repo_path))
            self.path = Path(tempfile.mkdtemp(prefix="omg-quarantine-"))
            try:
                self._q = pygit2.init_repository(str(self.path), bare=True)
                self._q.odb.add_disk_alternate(str(Path(self._real.path) / "objects"))
                for obj in objects:
                    self._q.odb.write(_TYPES[obj.kind], obj.data)
            except BaseException:
                self.close()
                raise
        self.oids = frozenset(o.oid for o in objects)

    def close(self) -> None:
        """Remove the scratch repository (the real one is untouched)."""
        shutil.rmtree(self.path, ignore_errors=True)

    def held(self, sha: str) -> bool:
        """Whether the real repository holds commit ``sha``."""
        try:
            return isinstance(self._real.get(sha), pygit2.Commit)
        except (ValueError, KeyError):
            return False

    def reach(self, tips: Sequence[str], haves: Sequence[str]) -> list[str]:
        """What ``tips`` reach down to ``haves`` (``pack.new_objects``), read here; a KeyError
        names an object neither the pack nor the repository holds."""
        return new_objects(self._q, tips, haves)

    def commits(self, tip: str, haves: Sequence[str]) -> list[str]:
        """The commits ``tip`` reaches that ``haves`` do not, oldest first."""
        return new_commits(self._q, [tip], haves)

    def entry_at(self, commit: str, path: str) -> tuple[int, str] | None:
        """The mode and object at ``path`` in ``commit``'s tree, None when it has none."""
        try:
            entry = self._q[commit].peel(pygit2.Commit).tree[path]
        except (KeyError, ValueError):
            return None
        return int(entry.filemode), str(entry.id)

    def commit(self, sha: str) -> tuple[list[str], str] | None:
        """A commit's parents and tree, None when ``sha`` is no commit here."""
        try:
            obj = self._q.get(sha)
        except (ValueError, KeyError):
            return None
        if not isinstance(obj, pygit2.Commit):
            return None
        return [str(p) for p in obj.parent_ids], str(obj.tree_id)

    def descends(self, new: str, old: str) -> bool:
        """Whether commit ``new`` is ``old`` or has it in its history."""
        return new == old or bool(self._q.descendant_of(pygit2.Oid(hex=new), pygit2.Oid(hex=old)))

    def entries(
        self, tree: str, *, enter: Callable[[str, str], bool] | None = None
    ) -> Iterator[TreeEntry]:
        """Every entry under ``tree``, depth first in name order; with ``enter``, a folder is
        entered only when ``enter(path, tree id)`` says so (a lane's new trees, not its whole
        project; a tree not yet checked at that path)."""
        stack: list[tuple[str, str]] = [("", tree)]
        while stack:
            prefix, oid = stack.pop()
            obj = self._q[oid]
            if not isinstance(obj, pygit2.Tree):
                raise KeyError(f"{oid} is no tree")
            for e in sorted(obj, key=lambda e: e.raw_name or b"", reverse=True):
                name = (e.raw_name or b"").decode("utf-8", "surrogateescape")
                path = f"{prefix}{name}"
                yield TreeEntry(path, int(e.filemode), str(e.id))
                if e.filemode == FileMode.TREE and (enter is None or enter(path, str(e.id))):
                    stack.append((f"{path}/", str(e.id)))

    def size(self, oid: str) -> int:
        """An object's size, read from its header alone."""
        return int(self._q.odb.read_header(pygit2.Oid(hex=oid))[1])

    def data(self, oid: str) -> bytes:
        return bytes(self._q.odb.read(pygit2.Oid(hex=oid))[1])

    def carry_in(self) -> None:
        """Write every object of the pack into the real repository (ids computed again)."""
        with translated(f"writing a hand-off's objects into {self._real.path}", FIX):
            for oid in sorted(self.oids):
                kind, data = self._q.odb.read(pygit2.Oid(hex=oid))
                self._real.odb.write(kind, data)


def move(
    repo_path: Path, moves: Sequence[RefMove], remote: str | None, tokens: Sequence[GitToken]
) -> None:
    """Move each ref here from its old commit to its new one (a ref held elsewhere is a
    GitError: another writer moved it), then push them all to ``remote``, never forcing —
    the remote's refs move only where they still hold what the new commits extend."""
    repo = pygit2.Repository(str(repo_path))
    with translated(f"moving the hand-off's refs in {repo_path}", FIX):
        for m in moves:
            new = pygit2.Oid(hex=m.new)
            current = repo.references.get(m.ref)
            now = None if current is None else str(current.resolve().target)
            if now == m.new:
                continue
            if now not in (None, m.old):
                raise GitError(
                    f"{m.ref} is at {now[:12]} here, not at {(m.old or 'nothing')[:12]} as the "
                    "hand-off planned: another writer moved it; nothing of the hand-off was "
                    "published"
                )
            if current is None:
                repo.references.create(m.ref, new)
            else:
                current.set_target(new, "omg: hand-off")
    if remote is not None and moves:
        with translated(f"pushing the hand-off to {remote}", FIX):
            remotes.push(repo, remote, [f"{m.ref}:{m.ref}" for m in moves], tokens)
