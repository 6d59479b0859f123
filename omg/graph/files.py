"""Where the loader reads a graph file and its fragments: the disk (a checkout), or a commit's
tree that `git/` hands in (a pull request's base, never a checkout the PR could have changed)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

#: What a fragment's path is: a file to read, nothing there, a link that leads out of its
#: directory (on disk), or a link at all (in a commit's tree, where omg follows none).
Kind = Literal["file", "missing", "outside", "link"]


class Files(Protocol):
    """The files a graph is loaded from; paths are the ones the loader builds (the graph file's
    as given, its fragments' under ``root``)."""

    def root(self, graph_file: Path) -> Path:
        """The root `fragments:` is relative to: the repository holding ``graph_file``."""
        ...

    def kind(self, path: Path, home: Path) -> Kind:
        """What ``path`` (a file of directory ``home``) is."""
        ...

    def read(self, path: Path) -> bytes:
        """The bytes of ``path``; OSError (with a ``strerror``) when they cannot be had."""
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

    def kind(self, path: Path, home: Path) -> Kind:
        try:
            real, there = path.resolve(), home.resolve()
        except (OSError, RuntimeError):
            real, there = path, home
        if not path.is_file():
            return "missing"
        return "file" if real.parent == there else "outside"

    def read(self, path: Path) -> bytes:
        return path.read_bytes()


DISK = Disk()
