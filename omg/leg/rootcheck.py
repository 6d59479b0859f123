"""Whether a node could become root and read omg's memory — where the proxy keeps the model
keys: passwordless ``sudo`` (``sudo -n true`` succeeds, as on GitHub-hosted runners), or omg
itself running as root. ``OMG_SUDO`` says what omg does then: ``refuse`` the leg (the default
where ``CI`` is set) or ``warn`` and go on (the default elsewhere)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from omg.errors import UsageError
from omg.runners.process import Spawner, SpawnRequest

#: The setting, and what it may say.
SETTING = "OMG_SUDO"
MODES = ("refuse", "warn")
#: Seconds ``sudo -n true`` may take (it asks no password: it answers at once or fails).
TIMEOUT_S = 10.0
#: How the run job drops sudo first on a GitHub-hosted runner (README, "Threat model").
FIX = (
    "drop it before omg runs: the omg action does so unless its sudo input is 'warn' (a step "
    "that removes the runner user's /etc/sudoers.d/runner and the docker and containerd "
    'sockets, README "Threat model"); or set OMG_SUDO=warn to go on knowing that any node '
    "can read the keys from omg's memory"
)


def mode(env: Mapping[str, str]) -> str:
    """``OMG_SUDO``'s mode; unset: ``refuse`` in CI (``CI`` set), ``warn`` elsewhere."""
    said = env.get(SETTING, "").strip().lower()
    if not said:
        return "refuse" if env.get("CI", "").strip().lower() not in ("", "0", "false") else "warn"
    if said not in MODES:
        raise UsageError(f"{SETTING}={said!r}: say refuse or warn")
    return said


def root_reachable(env: Mapping[str, str], spawn: Spawner, euid: int | None = None) -> str:
    """Why a node could become root ("" when it cannot): omg runs as root, or ``sudo -n true``
    succeeds on ``env``'s PATH."""
    if (os.geteuid() if euid is None else euid) == 0:
        return "omg runs as root, and so does every node"
    asked = SpawnRequest(
        ("sudo", "-n", "true"),
        cwd=Path("/"),
        env={"PATH": env.get("PATH", os.defpath), "LANG": "C"},
        timeout_s=TIMEOUT_S,
    )
    done = spawn(asked)
    if done.spawn_error is None and done.exit_code == 0:
        return "`sudo -n true` succeeds: any node can become root without a password"
    return ""


def check(
    env: Mapping[str, str], spawn: Spawner, warn: Callable[[str], None], euid: int | None = None
) -> None:
    """Refuse (a UsageError) or warn when a node could become root while omg's proxy holds a
    model key, as ``OMG_SUDO`` says."""
    how = mode(env)
    why = root_reachable(env, spawn, euid)
    if not why:
        return
    said = f"{why}, so it could read the model keys from omg's memory; {FIX}"
    if how == "refuse":
        raise UsageError(f"omg refuses to run agent nodes with a model key: {said}")
    warn(f"warning: {said}")
