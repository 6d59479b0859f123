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


def git_tokens(env: Mapping[str, str]) -> list[tuple[str, str, str | None]]:
    """Tokens git may offer an HTTPS remote, each with the one host it may go to (None: any).

    ``OMG_GIT_TOKEN`` goes to any host; ``GITHUB_TOKEN`` only to the GitHub server of
    ``GITHUB_SERVER_URL`` (github.com by default), so a stray remote never receives it.
    """
    out: list[tuple[str, str, str | None]] = []
    if env.get("OMG_GIT_TOKEN"):
        out.append(("OMG_GIT_TOKEN", env["OMG_GIT_TOKEN"], None))
    if env.get("GITHUB_TOKEN"):
        out.append(("GITHUB_TOKEN", env["GITHUB_TOKEN"], server_host(env)))
    return out
