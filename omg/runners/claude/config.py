"""claude's configuration home in an execution's room, and the flags that keep the CLI to it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from omg.runners.room import Room, carry

#: The variable that moves the CLI's configuration directory (settings, hooks, plugins,
#: transcripts under projects/): an execution's room.
CONFIG_DIR = "CLAUDE_CONFIG_DIR"
#: The folder of the room that holds it.
FOLDER = "claude"
#: Variables that would move the CLI's temporary files out of the room's TMPDIR.
TEMP_DIRS = ("CLAUDE_CODE_TMPDIR", "CLAUDE_TMPDIR")
#: Variables that authenticate the CLI: with one set, no stored login is carried in.
AUTH = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
#: The file of a login (`claude /login`) in a configuration directory.
LOGIN = ".credentials.json"


def furnish(room: Room, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the CLI's configuration directory made in ``room``: empty, but for the
    user's stored login when no key variable authenticates the CLI."""
    config = room.path / FOLDER
    config.mkdir()
    users = _users(env)
    if users is not None and not any(env.get(k) for k in AUTH):
        carry(users / LOGIN, config / LOGIN)  # data, never a program
    out = {k: v for k, v in env.items() if k not in TEMP_DIRS}
    out[CONFIG_DIR] = str(config)
    return out


def _users(env: Mapping[str, str]) -> Path | None:
    """The user's configuration directory: ``CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    if env.get(CONFIG_DIR):
        return Path(env[CONFIG_DIR])
    return Path(env["HOME"]) / ".claude" if env.get("HOME") else None


def flags(project: bool) -> list[str]:
    """Which settings the CLI loads: its own directory's (``user``, the room's) alone, and no
    MCP server but those given on the command line — or, for a node that opts in to the
    repository's settings, also ``.claude/settings.json``, ``.claude/settings.local.json`` and
    ``.mcp.json`` of its checkout (and the agents of ``.claude/agents/``)."""
    if project:
        return ["--setting-sources", "user,project,local"]
    return ["--setting-sources", "user", "--strict-mcp-config"]
