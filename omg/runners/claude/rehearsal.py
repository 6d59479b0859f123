"""A rehearsed claude: the CLI pointed at the stub model, with no real credentials, offline."""

from __future__ import annotations

from collections.abc import Mapping

from omg.runners.base import ATTEMPT_HEADER, NODE_HEADER, ROUND_HEADER

#: The dummy key a rehearsal gives claude (the stand-in never checks it).
REHEARSAL_KEY = "sk-ant-omg-rehearsal-not-a-key"
#: What a rehearsal withholds from agent nodes, so no real credentials or endpoint leak in.
WITHHELD = ("ANTHROPIC_", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR")
#: Quiet, offline claude: no telemetry, no update checks, no error reporting.
OFFLINE = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def endpoint(url: str) -> dict[str, str]:
    """The variables that point the CLI at the stub at ``url``."""
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": REHEARSAL_KEY}


def rehearsal_env(parent: Mapping[str, str], url: str) -> dict[str, str]:
    """The parent environment as a rehearsed leg's children see it (each execution's
    configuration directory is its room's, as in every run)."""
    env = {k: v for k, v in parent.items() if not k.startswith(WITHHELD)}
    env.update(OFFLINE)
    env.update(endpoint(url))
    return env


def rehearsal_tags(env: Mapping[str, str], node: str, round_: int, attempt: int) -> dict[str, str]:
    """``env`` with ANTHROPIC_CUSTOM_HEADERS naming the node, round and attempt (the CLI sends
    them with every request)."""
    tags = f"{NODE_HEADER}: {node}\n{ROUND_HEADER}: {round_}\n{ATTEMPT_HEADER}: {attempt}"
    return {**env, "ANTHROPIC_CUSTOM_HEADERS": tags}
