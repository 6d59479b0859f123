"""The error edge: every pygit2 failure leaves omg.git as a GitError that says what to do."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pygit2

from omg.errors import GitError, OmgError

#: What a git failure's message tells to do.
FIX = "check the repository with `git status` and `git fsck`, then resume"

_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]*@")


def redact(text: str) -> str:
    """Drop any ``user:secret@`` from URLs in ``text`` so no credential reaches a message."""
    return _USERINFO.sub(r"\g<scheme>", text)


@contextmanager
def translated(action: str, hint: str) -> Iterator[None]:
    """Turn pygit2, lookup and filesystem failures inside the block into one GitError.

    ``action`` says what was being done and where ("committing run r1 in /repo");
    ``hint`` says what the user can do next. OmgErrors raised inside pass through.
    """
    try:
        yield
    except OmgError:
        raise
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        raise GitError(redact(f"{action} failed: {describe(exc)}; {hint}")) from exc


def describe(exc: BaseException) -> str:
    """A one-line account of an exception (KeyError's repr quoting stripped)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return text.strip().rstrip(".") or type(exc).__name__
