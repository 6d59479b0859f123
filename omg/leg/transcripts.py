"""Session transcripts: kept in the run directory after each agent execution (masked, before its
room and the CLI's own copy go), restored into the room of every execution that resumes one —
``handoff: session``, a turn-limited attempt continued — on this machine or a fresh CI runner."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from omg.mask import Masker
from omg.runners.base import AgentRuntime

if TYPE_CHECKING:
    from omg.state.store import RunDir

#: A transcript larger than this is not kept (a cut one could not be resumed); the run then
#: resumes only where the session was made.
LIMIT = 4 << 20


def keep(
    rundir: RunDir, runner: AgentRuntime, env: Mapping[str, str], cwd: Path, session: str
) -> Path | None:
    """Copy the session's transcript into ``sessions/``; where, or None.

    It is masked like everything in the run directory (the leg's masker), and by the secret
    values of the session's own environment ``env`` too.
    """
    source = runner.transcript(env, cwd, session)
    if source is None:
        return None
    try:
        if source.stat().st_size > LIMIT:
            return None
        data = source.read_bytes()
    except OSError:
        return None
    data = Masker.from_env(env).data(data)
    try:
        return rundir.write_session(session, data)
    except OSError:
        return None


def restore(
    rundir: RunDir, runner: AgentRuntime, env: Mapping[str, str], cwd: Path, session: str
) -> bool:
    """Put a kept transcript where the runtime looks for it (in an execution's new room),
    unless one is already there."""
    target = runner.transcript(env, cwd, session)
    kept = rundir.session(session)
    if target is None or target.exists() or not kept.exists():
        return False
    try:
        _write(target, kept.read_bytes())
    except OSError:  # the runtime then says the session is missing, and omg gives the hint
        return False
    return True


def _write(target: Path, data: bytes) -> None:
    """Atomically, and safely when two siblings restore one parent's transcript at once."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    tmp.write_bytes(data)
    os.replace(tmp, target)
