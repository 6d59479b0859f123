"""The scrub: omg's secrets out of its own environment block before any node can look.

A process's initial environment stays readable at ``/proc/<pid>/environ`` for its whole life
(changing ``os.environ`` does not touch it), so a shell node could read omg's ``GITHUB_TOKEN``
there as its ``$PPID``. When the environment holds a secret, omg re-executes itself once with
only the variables Python needs to start (``PATH``, ``HOME``, the locale, ``PYTHON*``…) and
hands the rest over an inherited pipe, which the new image reads and closes at once; they live
on in its memory (``os.environ``), from which children get exactly what ``child_env`` gives
them. omg also marks itself non-dumpable, so a process of the same user can neither read its
``/proc`` files nor attach to it. Commands that start no child skip all of this.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
import sys
from collections.abc import Mapping

from omg.secretname import is_secret_name

#: The variable naming the pipe the re-executed omg reads its environment from.
HANDOFF = "_OMG_ENV_FD"
#: What stays in the environment block: what the interpreter reads while it starts, the mark
#: of the node omg may itself run inside (``runners.process.MARK``), and the handoff.
KEEP = frozenset(
    {"PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "USER", "LOGNAME", "TERM", "SHELL"}
    | {"PWD", "VIRTUAL_ENV", "_OMG_CHILD", HANDOFF}
)
KEEP_PREFIXES = ("LC_", "PYTHON", "LD_", "COV_CORE_", "COVERAGE_")
#: Variables that may carry a secret though their names do not say so (secret inputs).
SENSITIVE = frozenset(("OMG_INPUTS",))
#: Commands that start no child process: nothing to hide from.
NO_CHILDREN = frozenset(
    ("--help", "-h", "lint", "graph", "status", "replay", "clean", "plan", "stub-model")
)
#: The most a pipe takes without a reader (Linux lets a user grow one to 1 MiB).
_PIPE_MAX = 1 << 20
_F_SETPIPE_SZ = 1031
_PR_SET_DUMPABLE = 4


def kept(name: str) -> bool:
    """Whether a variable stays in the re-executed process's environment block."""
    if is_secret_name(name) or name in SENSITIVE:
        return False
    return name in KEEP or name.startswith(KEEP_PREFIXES)


def holds_secrets(env: Mapping[str, str]) -> bool:
    """Whether anything in ``env`` is worth a re-exec: a set secret-named variable, or inputs."""
    return any(v and (is_secret_name(k) or k in SENSITIVE) for k, v in env.items())


def scrub(args: list[str]) -> None:
    """Called first thing by the console entry point, with the command's arguments.

    In the re-executed image: take the environment back from the pipe. Otherwise, for a
    command that may start children, re-exec without the secrets (when there are any). On
    Linux only (elsewhere there is no ``/proc`` to read them from); never raises.
    """
    if not sys.platform.startswith("linux"):
        return
    if HANDOFF in os.environ:
        _receive(os.environ.pop(HANDOFF))
        undumpable()
        return
    if not args or args[0] in NO_CHILDREN:
        return
    if holds_secrets(os.environ):
        _reexec()  # returns only when it could not
    undumpable()


def _reexec() -> None:
    moved = {k: v for k, v in os.environ.items() if not kept(k)}
    payload = json.dumps(moved).encode()
    try:
        r, w = os.pipe()
    except OSError:
        return
    try:
        if len(payload) > 60 << 10:
            fcntl.fcntl(w, _F_SETPIPE_SZ, min(_PIPE_MAX, len(payload) + 4096))
        os.set_blocking(w, False)
        if os.write(w, payload) != len(payload):
            raise BlockingIOError
    except OSError:  # too large for a pipe without a reader: stay, non-dumpable
        os.close(r)
        os.close(w)
        return
    os.close(w)
    os.set_inheritable(r, True)
    env = {k: v for k, v in os.environ.items() if kept(k)}
    env[HANDOFF] = str(r)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    except OSError:
        os.close(r)


def _receive(fd_text: str) -> None:
    """Read the environment the previous image handed over, close the pipe, restore it."""
    try:
        fd = int(fd_text)
        if fd <= 2 or not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return  # not a handoff omg made
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        os.close(fd)
        moved = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return
    if isinstance(moved, dict):
        os.environ.update({str(k): str(v) for k, v in moved.items()})


def undumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): other processes of this user cannot read omg's /proc files
    (environ, mem) nor ptrace it; the children it executes are dumpable again."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        return
