"""A commit's tree read as files: what a pull request's graph and fragments are loaded from (its
base's, to run; its head's, to lint), whatever the job's checkout holds."""

from __future__ import annotations

import errno
from pathlib import Path, PurePosixPath
from typing import Literal

import pygit2
from pygit2.enums import FileMode

#: A file larger than this is not a graph or fragment a person wrote; it is not read.
MAX_TREE_FILE = 1024 * 1024


class TreeFiles:
    """The files of commit ``sha``: paths are relative to the repository's root (``Path()``);
    links are reported, never followed. Reads nothing from disk."""

    def __init__(self, repo: pygit2.Repository, sha: str, limit: int = MAX_TREE_FILE) -> None:
        commit = repo.get(sha)
        if not isinstance(commit, pygit2.Commit):
            raise ValueError(f"{sha} is not a commit")
        self.sha: str = str(commit.id)
        self._repo: pygit2.Repository = repo
        self._tree: pygit2.Tree = commit.tree
        self._limit: int = limit

    def root(self, graph_file: Path) -> Path:
        return Path()

    def _entry(self, path: Path) -> pygit2.Object | None:
        parts = PurePosixPath(path.as_posix()).parts
        if not parts or path.is_absolute() or any(p in ("..", ".") for p in parts):
            return None
        try:
            found: pygit2.Object = self._tree[PurePosixPath(*parts).as_posix()]
        except KeyError:
            return None
        return found

    def _mode(self, path: Path) -> int | None:
        entry = self._entry(path)
        return None if entry is None else int(entry.filemode)

    def kind(self, path: Path, home: Path, root: Path) -> Literal["file", "missing", "link"]:
        mode = self._mode(path)
        if mode == FileMode.LINK:
            return "link"
        return "file" if mode in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE) else "missing"

    def blob_id(self, path: Path) -> str | None:
        """The blob ``path`` names (a link's too), or None when there is none: two trees hold
        the same file exactly when these are equal."""
        entry = self._entry(path)
        return str(entry.id) if entry is not None and entry.type_str == "blob" else None

    def size(self, path: Path) -> int:
        return self._blob(path).size

    def read(self, path: Path, limit: int) -> bytes:
        blob = self._blob(path)
        if blob.size > limit:  # what a caller would refuse by its size: never loaded whole
            return bytes(blob.data[: limit + 1])
        return bytes(blob.data)

    def _blob(self, path: Path) -> pygit2.Blob:
        at = f"commit {self.sha[:12]}"
        mode = self._mode(path)
        if mode == FileMode.LINK:
            raise OSError(errno.ELOOP, f"a link in {at}, which omg does not follow", str(path))
        if mode not in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
            raise FileNotFoundError(errno.ENOENT, f"no such file in {at}", str(path))
        entry = self._entry(path)
        assert entry is not None
        blob = self._repo.get(entry.id)
        if not isinstance(blob, pygit2.Blob):
            raise FileNotFoundError(errno.ENOENT, f"no such file in {at}", str(path))
        if blob.size > self._limit:
            raise OSError(
                errno.EFBIG,
                f"{blob.size:,} bytes in {at}, more than the {self._limit:,} omg reads",
                str(path),
            )
        return blob
