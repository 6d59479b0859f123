"""Session transcripts: kept in the run directory after each agent execution, restored before
a ``--resume`` on another machine, so ``handoff: session`` survives a fresh CI runner."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Mapping
from pathlib import Path

from omg.runners.claude_transcript import transcript_path
from omg.state.store import RunDir

#: A transcript larger than this is not kept (a cut one could not be resumed); the run then
#: resumes only where the session was made.
LIMIT = 4 << 20
#: Variables whose values never enter a kept transcript: any token, key, secret or password
#: (the CI token, the API key, the OAuth token, a git token and whatever a graph's env adds).
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
REDACTED = b"[redacted by omg]"


def keep(rundir: RunDir, env: Mapping[str, str], cwd: Path, session: str) -> Path | None:
    """Copy the session's transcript into ``sessions/`` (secrets redacted); where, or None."""
    source = transcript_path(env, cwd, session)
    if source is None:
        return None
    try:
        if source.stat().st_size > LIMIT:
            return None
        data = source.read_bytes()
    except OSError:
        return None
    for value in _secrets({**os.environ, **env}):
        data = data.replace(value.encode(), REDACTED)
    target = rundir.session(session)
    try:
        _write(target, data)
    except OSError:
        return None
    return target


def restore(rundir: RunDir, env: Mapping[str, str], cwd: Path, session: str) -> bool:
    """Put a kept transcript where claude looks for it, unless one is already there."""
    target = transcript_path(env, cwd, session)
    kept = rundir.session(session)
    if target is None or target.exists() or not kept.exists():
        return False
    try:
        _write(target, kept.read_bytes())
    except OSError:  # claude then says the session is missing, and omg gives the hint
        return False
    return True


def _secrets(env: Mapping[str, str]) -> list[str]:
    """Secret values, longest first so a token inside another is not half-redacted."""
    found = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= 8}
    return sorted(found, key=len, reverse=True)


def _write(target: Path, data: bytes) -> None:
    """Atomically, and safely when two siblings restore one parent's transcript at once."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    tmp.write_bytes(data)
    os.replace(tmp, target)
