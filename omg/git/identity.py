"""The identity omg commits as: environment, then repository config, then a bot default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import pygit2

BOT_NAME = "omg"
BOT_EMAIL = "omg@users.noreply.github.com"

Role = Literal["AUTHOR", "COMMITTER"]


def signature(repo: pygit2.Repository, env: Mapping[str, str], role: Role) -> pygit2.Signature:
    """``GIT_<ROLE>_NAME``/``_EMAIL``, else ``user.name``/``user.email``, else the bot.

    Each field falls back on its own, so a runner that sets only an email still commits.
    CI runners usually have no ``user.name``; the bot default keeps commits possible there.
    """
    name = env.get(f"GIT_{role}_NAME") or _config(repo, "user.name") or BOT_NAME
    email = env.get(f"GIT_{role}_EMAIL") or _config(repo, "user.email") or BOT_EMAIL
    return pygit2.Signature(name, email)


def _config(repo: pygit2.Repository, key: str) -> str | None:
    try:
        value = repo.config[key]
    except (KeyError, pygit2.GitError):
        return None
    return str(value).strip() or None
