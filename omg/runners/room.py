"""Rooms: the directory omg makes for one execution alone — its HOME, its TMPDIR and, for an
agent, its CLI's configuration home — and removes, with everything in it, when it ends (a shell
execution's behind it, on the leg's sweeper thread, before the leg ends)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from queue import SimpleQueue

#: What every room holds from the start: the execution's HOME and TMPDIR (empty).
HOME, TMP = "home", "tmp"
#: The file a room's HOME starts with when the user has a git identity (``Rooms.gitconfig``).
GITCONFIG = ".gitconfig"


@dataclass(frozen=True)
class Room:
    """One execution's room: ``path`` holds ``home/``, ``tmp/`` and whatever a runtime puts
    there (its configuration home), none of it shared with another execution."""

    path: Path

    @property
    def home(self) -> Path:
        return self.path / HOME

    @property
    def tmp(self) -> Path:
        return self.path / TMP

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with HOME and TMPDIR in this room: what a node writes to ``~`` or a temp
        file stays here, and what an earlier node wrote to its own is not found."""
        return {**env, "HOME": str(self.home), "TMPDIR": str(self.tmp)}


class Sweeper:
    """Rooms removed behind the executions, on one thread: a room is never given to another
    execution, so removing it (three directories and a file: milliseconds on a busy disk) need
    not hold up the next node. ``drain`` waits until every room handed over is gone."""

    def __init__(self) -> None:
        self._queue: SimpleQueue[Path | None] = SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def put(self, path: Path) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._sweep, name="omg-rooms", daemon=True)
                self._thread.start()
            self._queue.put(path)

    def drain(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is not None:
                self._queue.put(None)
        if thread is not None:
            thread.join()

    def _sweep(self) -> None:
        while (path := self._queue.get()) is not None:
            remove_room(path)


@dataclass(frozen=True)
class Rooms:
    """Where one run's executions get their rooms on this machine: ``base``, one directory
    per run directory (by its mark), so the next leg of the run clears what a killed leg left."""

    base: Path
    #: What every room's HOME holds as its ``.gitconfig`` (the user's identity alone; ""
    #: for none): ``git/identity.room_gitconfig``.
    gitconfig: str = ""
    sweeper: Sweeper = field(default_factory=Sweeper, compare=False, repr=False)

    @classmethod
    def of_run(cls, mark: str, parent: Mapping[str, str], gitconfig: str = "") -> Rooms:
        """The rooms of the run marked ``mark`` (``process.run_mark``), under the temp directory
        of omg's environment ``parent``: a short path (a CLI's sockets live in its TMPDIR)."""
        tmp = parent.get("TMPDIR") or tempfile.gettempdir()
        digest = hashlib.sha256(mark.encode()).hexdigest()[:10]
        return cls(Path(tmp).resolve() / f"omg-{digest}", gitconfig)

    @contextmanager
    def room(self, behind: bool = False) -> Iterator[Room]:
        """A new, empty room (mode 0700), removed with all it holds when the block ends — with
        ``behind``, handed to the sweeper to remove (``clear`` waits for it)."""
        prefix, where = self._where()
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
        room = Room(path)
        try:
            room.home.mkdir()
            room.tmp.mkdir()
            if self.gitconfig:
                _write_new(room.home / GITCONFIG, self.gitconfig.encode())
            yield room
        finally:
            if behind:
                self.sweeper.put(path)
            else:
                remove_room(path)

    def clear(self) -> None:
        """Remove every room of the run: what the sweeper still holds, and what executions a
        killed leg ran left behind."""
        self.sweeper.drain()
        with contextlib.suppress(OSError):
            info = os.lstat(self.base)
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
                remove(self.base)

    def _where(self) -> tuple[str, Path]:
        """(prefix, directory) of a new room: in ``base``, made private to this user; a base
        someone else made, or one open to others or a link, is never used — the room is
        made beside it instead."""
        with contextlib.suppress(FileExistsError):
            os.mkdir(self.base, 0o700)
        info = os.lstat(self.base)
        if (
            stat.S_ISDIR(info.st_mode)
            and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
        ):
            return "", self.base
        return "omg-room-", self.base.parent


def _write_new(path: Path, data: bytes) -> None:
    """A new file holding ``data``, in three system calls (``open()`` adds a buffer, an fstat,
    two seeks and a terminal check: it counts when every execution's room gets one)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def remove_room(path: Path) -> None:
    """Remove a room: in eight calls when it holds only what it was made with (an empty
    ``tmp/``, ``home/`` with at most its ``.gitconfig``), every one inside it relative to a
    directory opened without following a link (the room's own ``rmdir`` removes only an empty
    directory, never through a link); else (anything more, or anything else) with ``remove``."""
    if not _remove_bare(path):
        remove(path)


def _remove_bare(path: Path) -> bool:
    """Whether ``path`` was a room as made and is gone; False leaves what is left to ``remove``."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        top = os.open(path, flags)
    except OSError:
        return False
    try:
        os.rmdir(TMP, dir_fd=top)
        home = os.open(HOME, flags, dir_fd=top)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(GITCONFIG, dir_fd=home)
        finally:
            os.close(home)
        os.rmdir(HOME, dir_fd=top)
        os.rmdir(path)
    except OSError:
        return False
    finally:
        os.close(top)
    return True


def remove(path: Path) -> None:
    """Remove ``path`` and everything under it, links not followed; read-only directories (a Go
    module cache, a tool's own) are made writable first. Best effort: never raises."""
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except OSError:
        for top, dirs, _ in os.walk(path):
            for d in dirs:
                where = os.path.join(top, d)
                if not os.path.islink(where):
                    with contextlib.suppress(OSError):
                        os.chmod(where, 0o700)
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
        shutil.rmtree(path, ignore_errors=True)


def carry(source: Path, target: Path) -> bool:
    """Copy ``source`` into a room as ``target``, readable by its owner alone: a regular file
    only (a link is not followed); whether it was there to copy. Never raises."""
    try:
        info = os.lstat(source)
        if not stat.S_ISREG(info.st_mode):
            return False
        data = source.read_bytes()
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
    except OSError:
        return False
    return True
