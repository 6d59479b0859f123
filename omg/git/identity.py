"""The identity omg commits as: environment, then repository config, then a bot default."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
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
    import pygit2

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
        for key, given in _user(file).items():
            value = given.strip()
            if value and value.isprintable():
                found[key] = value.replace("\\", "\\\\").replace('"', '\\"')
    if not found:
        return ""
    return "[user]\n" + "".join(f'\t{k} = "{v}"\n' for k, v in sorted(found.items()))


def _user(file: str) -> dict[str, str]:
    """``user.name`` and ``user.email`` of one configuration file, as libgit2 reads them; a
    plain file is read here, so a leg that commits nothing starts without loading pygit2."""
    try:
        with open(file, "rb") as f:
            plain = plain_user(f.read())
    except OSError:
        plain = None
    if plain is not None:
        return plain
    import pygit2

    out: dict[str, str] = {}
    for key in ("name", "email"):
        try:
            out[key] = str(pygit2.Config(file)[f"user.{key}"])
        except (KeyError, OSError, pygit2.GitError):
            continue
    return out


#: The characters of a plain section or key name: git's own, less the dot of an old-style
#: subsection (``[user.x]``).
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


def plain_user(data: bytes) -> dict[str, str] | None:
    """``user.name`` and ``user.email`` of a configuration file that holds nothing but plain
    ``[section]`` headers, ``key = value`` lines and whole-line comments, each key at most
    once; None for anything else — a quote, a backslash, a continued line, an include, a
    subsection, a comment after a value, a run of blanks or a control character inside one,
    text that is not UTF-8 — which libgit2 reads instead (``tests/git/test_identity.py``
    holds the two to the same answers)."""
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None
    if (
        any(c in text for c in '"\\\r')
        or not text.replace("\n", "").replace("\t", "").isprintable()
    ):
        return None
    found: dict[str, str] = {}
    section = None
    for line in (raw.strip(" \t") for raw in text.split("\n")):
        if not line or line[0] in "#;":
            continue
        if line[0] == "[":
            name = line[1:-1]
            if line[-1] != "]" or not name or not _NAME_CHARS.issuperset(name):
                return None
            section = name.lower()
            if section.startswith("include"):
                return None
            continue
        key, eq, value = line.partition("=")
        key, value = key.rstrip(" \t").lower(), value.strip(" \t")
        if section is None or not eq or not _is_key(key):
            return None
        if any(c in value for c in "#;\t") or "  " in value:
            return None
        if section == "user" and key in ("name", "email"):
            if key in found:
                return None
            found[key] = value
    return found


def _is_key(key: str) -> bool:
    return bool(key) and key[0].isalpha() and key.isascii() and _NAME_CHARS.issuperset(key)


def _config(repo: pygit2.Repository, key: str) -> str | None:
    import pygit2

    try:
        value = repo.config[key]
    except (KeyError, pygit2.GitError):
        return None
    return str(value).strip() or None
