"""A rehearsed codex: the CLI pointed at the stub model's Responses API through a provider
of omg's own, with a dummy key."""

from __future__ import annotations

from collections.abc import Mapping

from omg.runners.base import ATTEMPT_HEADER, NODE_HEADER, ROUND_HEADER
from omg.runners.codex.config import BASE_URL_ENV

#: The dummy key a rehearsal gives codex (the stand-in never checks it).
REHEARSAL_KEY = "sk-omg-rehearsal-not-a-key"
#: What a rehearsal withholds, so no real credentials or endpoint leak in.
WITHHELD = ("OPENAI_", "CODEX_API_KEY", "CODEX_HOME", BASE_URL_ENV)
#: The variables whose values codex sends as the rehearsal's node, round and attempt headers.
TAGS = {
    NODE_HEADER: "OMG_CODEX_NODE",
    ROUND_HEADER: "OMG_CODEX_ROUND",
    ATTEMPT_HEADER: "OMG_CODEX_ATTEMPT",
}


def endpoint(url: str) -> dict[str, str]:
    """The variables that point codex at the stub at ``url``."""
    return {BASE_URL_ENV: f"{url}/v1", "OPENAI_API_KEY": REHEARSAL_KEY}


def rehearsal_env(parent: Mapping[str, str], url: str) -> dict[str, str]:
    """The parent environment as a rehearsed leg's children see it (each execution's codex
    home is its room's, as in every run)."""
    env = {k: v for k, v in parent.items() if not k.startswith(WITHHELD)}
    env.update(endpoint(url))
    return env


def rehearsal_tags(env: Mapping[str, str], node: str, round_: int, attempt: int) -> dict[str, str]:
    """``env`` with the values codex's provider sends as headers (``env_http_headers``)."""
    values = {NODE_HEADER: node, ROUND_HEADER: str(round_), ATTEMPT_HEADER: str(attempt)}
    return {**env, **{TAGS[h]: v for h, v in values.items()}}
