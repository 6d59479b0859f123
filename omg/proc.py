"""The subprocess chokepoint: every child omg starts goes through ``spawn``."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class ProcResult:
    """What a finished (or killed) child left behind."""

    argv: tuple[str, ...]
    exit_code: int | None  # None when it was killed for its timeout or never started
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    spawn_error: str | None = None


class Spawner(Protocol):
    """Runs one child to completion; tests inject their own to observe or script children."""

    def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout_s: float,
        merge_stderr: bool = False,
    ) -> ProcResult: ...


def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    merge_stderr: bool = False,
) -> ProcResult:
    """Run ``argv`` in its own process group; on timeout kill the whole group.

    stdin is closed. Output is decoded as UTF-8 with replacement, never raising.
    """
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcResult(tuple(argv), None, "", "", time.monotonic() - start, spawn_error=str(exc))
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a grandchild kept a pipe open
            out, err = b"", b""
    code = None if timed_out else proc.returncode
    return ProcResult(
        tuple(argv),
        code,
        _decode(out),
        _decode(err),
        time.monotonic() - start,
        timed_out=timed_out,
    )


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
