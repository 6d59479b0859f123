"""The identity omg commits as: environment, then repository config, then a bot default."""

from __future__ import annotations

import os
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


def room_gitconfig(env: Mapping[str, str]) -> str:
    """The git configuration every execution's room gets in its HOME: the user's identity
    (``user.name``, ``user.email`` of ``~/.gitconfig`` or the XDG one, ``env`` saying where
    those are) and nothing else of it — no alias, hook path, helper or program reaches a
    node — so a node that commits still signs as the user; "" when there is none."""
    home = env.get("HOME")
    xdg = env.get("XDG_CONFIG_HOME") or (f"{home}/.config" if home else None)
    files = [f"{xdg}/git/config" if xdg else "", f"{home}/.gitconfig" if home else ""]
    found: dict[str, str] = {}
    for file in (f for f in files if f and os.path.isfile(f)):  # ~/.gitconfig wins, as in git
        for key in ("name", "email"):
            try:
                value = str(pygit2.Config(file)[f"user.{key}"]).strip()
            except (KeyError, OSError, pygit2.GitError):
                continue
            if value and value.isprintable():
                found[key] = value.replace("\\", "\\\\").replace('"', '\\"')
    if not found:
        return ""
    return "[user]\n" + "".join(f'\t{k} = "{v}"\n' for k, v in sorted(found.items()))


def _config(repo: pygit2.Repository, key: str) -> str | None:
    try:
        value = repo.config[key]
    except (KeyError, pygit2.GitError):
        return None
    return str(value).strip() or None
