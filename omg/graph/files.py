"""Where the loader reads a graph file and its fragments: the disk (a checkout), or a commit's
tree that `git/` hands in (a pull request's base, never a checkout the PR could have changed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Protocol

#: What a fragment's path is: a file to read, nothing there, a link that leads out of its
#: directory (on disk), a directory reached through a link (on disk), or a link at all (in a
#: commit's tree, where omg follows none).
Kind = Literal["file", "missing", "outside", "linked-home", "link"]


class Files(Protocol):
    """The files a graph is loaded from; paths are the ones the loader builds (the graph file's
    as given, its fragments' under ``root``)."""

    def root(self, graph_file: Path) -> Path:
        """The root `fragments:` is relative to: the repository holding ``graph_file``."""
        ...

    def kind(self, path: Path, home: Path, root: Path) -> Kind:
        """What ``path`` (a file of directory ``home``, under ``root``) is."""
        ...

    def size(self, path: Path) -> int:
        """How many bytes ``path`` holds, read from its metadata, never its content; OSError
        (with a ``strerror``) when it cannot be had."""
        ...

    def read(self, path: Path, limit: int) -> bytes:
        """The bytes of ``path``, never more than ``limit`` + 1 of them (so a file that grew
        past its limit since ``size`` shows it); OSError when they cannot be had."""
        ...


def repo_root(graph_file: Path) -> Path:
    """The root of the git repository holding ``graph_file``; its own directory when in none."""
    start = graph_file.resolve().parent
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return start


class Disk:
    """The files on disk: a checkout, or any directory."""

    def root(self, graph_file: Path) -> Path:
        return repo_root(graph_file)

    def kind(self, path: Path, home: Path, root: Path) -> Kind:
        try:
            real, there = path.resolve(), home.resolve()
        except (OSError, RuntimeError):
            real, there = path, home
        if not path.is_file():
            return "missing"
        if there != _unlinked(home, root):
            return "linked-home"
        return "file" if real.parent == there else "outside"

    def size(self, path: Path) -> int:
        return path.stat().st_size

    def read(self, path: Path, limit: int) -> bytes:
        with path.open("rb") as f:
            return f.read(limit + 1)


def _unlinked(directory: Path, root: Path) -> Path:
    """Where ``directory`` is when no link lies between ``root`` and it."""
    try:
        return Path(os.path.normpath(root.resolve() / directory.relative_to(root)))
    except (ValueError, OSError, RuntimeError):
        return directory


DISK = Disk()
