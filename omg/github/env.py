"""GitHub: the one module that reads GITHUB_* variables."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit


def server_host(env: Mapping[str, str]) -> str | None:
    """The host of the GitHub server a workflow runs against (github.com unless GHES)."""
    return urlsplit(env.get("GITHUB_SERVER_URL") or "https://github.com").hostname


def actor(env: Mapping[str, str]) -> str | None:
    """Who triggered the workflow run, when omg runs inside GitHub Actions."""
    return env.get("GITHUB_ACTOR") or None
