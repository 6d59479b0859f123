"""A lane checkout a kill left half made: adopted when finished, else cleared or refused."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from omg.errors import GitError
from omg.git.names import HEADS, common_dir, head


def clear(repo: pygit2.Repository, path: Path, wid: str, branch: str) -> None:
    """Leave at ``path`` a checkout omg finished making, a foreign thing (which
    ``open_checkout`` refuses), or nothing — never what a kill while making one left behind.

    Making one (libgit2's worktree add) goes: the admin directory ``.git/worktrees/<wid>``,
    the lane directory, its ``.git`` file, the admin's ``commondir`` and ``gitdir``, ``HEAD``,
    then the checkout of ``branch``'s files, whose last step writes the admin's ``index`` (by
    renaming ``index.lock``). So an admin entry holding all four, registered at ``path``, is a
    finished checkout, adopted as it is. Anything short of that was never handed to a node: if
    all it holds besides its ``.git`` is (the start of) what ``branch`` holds, it is cleared for
    a fresh checkout — the lane directory renamed aside first (one step, so a kill never leaves
    half of it), then the admin entry, then what was set aside; else it is refused."""
    admin = common_dir(repo) / "worktrees" / wid
    aside = path.with_name(f".{path.name}.unfinished")  # no ref component starts with "."
    remove(aside)  # a kill while clearing left it
    if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
        path.rmdir()  # an empty directory (say, from a run outside git) holds nothing to keep
    if path.is_symlink() or path.exists():
        if _finished(admin, path) or not _made_for(path, admin):
            return
        tip = head(repo, HEADS + branch)
        stray = _stray(repo, path, repo[tip].peel(pygit2.Tree) if tip else None, top=True)
        if stray is not None:
            raise GitError(
                f"{path} is a checkout of {branch} omg began and never finished, but it holds "
                f"{stray}, which that branch does not; move what you want to keep out of it, "
                "remove the rest, and resume"
            )
        path.rename(aside)
    remove(admin)  # without its checkout, or never finished: nothing in it to keep
    remove(aside)


def _stray(
    repo: pygit2.Repository, folder: Path, tree: pygit2.Tree | None, *, top: bool = False
) -> Path | None:
    """The first thing in ``folder`` (besides a checkout's own ``.git``) that is not ``tree``'s
    entry of that name — nor, for a file, the start of it (a write cut short); None if none."""
    for entry in folder.iterdir():
        if top and entry.name == ".git":
            continue
        item = tree[entry.name] if tree is not None and entry.name in tree else None
        if item is None or not _same(repo, entry, item):
            return entry
        if entry.is_dir() and not entry.is_symlink():
            inner = _stray(repo, entry, repo[item.id].peel(pygit2.Tree))
            if inner is not None:
                return inner
    return None


def _same(repo: pygit2.Repository, entry: Path, item: pygit2.Object) -> bool:
    if entry.is_symlink():
        target = os.fsencode(os.readlink(entry))
        return item.filemode == FileMode.LINK and repo[item.id].peel(pygit2.Blob).data == target
    if entry.is_dir():
        return item.filemode == FileMode.TREE
    if not entry.is_file() or item.filemode not in (FileMode.BLOB, FileMode.BLOB_EXECUTABLE):
        return False
    blob = repo[item.id].peel(pygit2.Blob)
    if entry.stat().st_size > blob.size:
        return False
    return blob.data.startswith(entry.read_bytes())


def _finished(admin: Path, path: Path) -> bool:
    """Whether ``admin`` is a complete registration of a checkout at ``path``."""
    if not all((admin / part).is_file() for part in ("HEAD", "commondir", "gitdir", "index")):
        return False
    return _points_at(admin / "gitdir", path / ".git", prefix="")


def _made_for(path: Path, admin: Path) -> bool:
    """Whether ``path`` is a checkout being made for ``admin``: its ``.git`` file names it, or
    is the start of naming it (a kill mid-write), or — with nothing else yet — is empty."""
    dotgit = path / ".git"
    if dotgit.is_symlink() or not dotgit.is_file():
        return False
    return _points_at(dotgit, admin, prefix="gitdir: ", alone=len(list(path.iterdir())) == 1)


def _points_at(link: Path, target: Path, *, prefix: str, alone: bool = False) -> bool:
    """Whether the small file ``link`` holds ``prefix`` + ``target``'s path (or, ``alone``,
    only the beginning of that)."""
    if link.stat().st_size > 4096:
        return False
    text = link.read_text(errors="replace")
    if text.startswith(prefix) and text.endswith("\n"):
        named = text.removeprefix(prefix).strip()
        return bool(named) and Path(named).resolve() == target.resolve()
    whole = f"{prefix}{target}/"
    return alone and (whole.startswith(text) or f"{prefix}{target.resolve()}/".startswith(text))


def remove(path: Path) -> None:
    """Remove ``path`` whatever it is (a link itself, never what it points at); gone is fine."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
