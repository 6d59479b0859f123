"""GitHub: the one module that reads GITHUB_* variables."""

from __future__ import annotations

from collections.abc import Mapping


def actor(env: Mapping[str, str]) -> str | None:
    """Who triggered the workflow run, when omg runs inside GitHub Actions."""
    return env.get("GITHUB_ACTOR") or None
