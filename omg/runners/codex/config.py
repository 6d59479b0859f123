"""codex's home in an execution's room, and the flags that keep the CLI to it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from omg.runners.room import Room, carry

#: The variable that points codex at another Responses API (omg then passes a provider).
BASE_URL_ENV = "OMG_CODEX_BASE_URL"
#: The variable that moves codex's home (config.toml, rules, sessions/, its databases).
HOME = "CODEX_HOME"
#: The folder of the room that holds it.
FOLDER = "codex"
#: A variable that would move codex's databases (thread history) out of its home.
SQLITE_HOME = "CODEX_SQLITE_HOME"
#: Variables that authenticate codex: kept out of the agent's commands, and with one set no
#: stored login is carried in.
AUTH = ("OPENAI_API_KEY", "CODEX_API_KEY")
#: The file of a login (`codex login`) in codex's home.
LOGIN = "auth.json"


def users_home(env: Mapping[str, str]) -> Path:
    """The user's codex home: ``$CODEX_HOME``, else ``~/.codex``."""
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"])
    return Path(env.get("HOME", "/")) / ".codex"


def furnish(room: Room, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with codex's home made in ``room``: empty, but for the user's stored login when
    no key variable authenticates codex."""
    home = room.path / FOLDER
    home.mkdir()
    if not any(env.get(k) for k in AUTH):
        carry(users_home(env) / LOGIN, home / LOGIN)  # data, never a program
    out = {k: v for k, v in env.items() if k != SQLITE_HOME}
    out[HOME] = str(home)
    return out


def flags(project: bool) -> list[str]:
    """``codex exec`` options: the key variables kept out of the agent's commands; then either
    no ``config.toml`` at all (the room's holds nothing anyway) and every ``-c`` omg passes
    checked against this version, or — for a node that opts in to the repository's
    settings — the project trusted, so its ``.codex/config.toml`` and MCP servers load
    (codex refuses ``--trust`` beside ``--ignore-user-config``)."""
    keep_out = "shell_environment_policy.exclude=" + json.dumps(list(AUTH))
    if project:
        return ["-c", keep_out, "--trust"]
    return ["-c", keep_out, "--ignore-user-config", "--strict-config"]
