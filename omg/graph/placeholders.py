"""Placeholders: the `{{ inputs.x }}` / `{{ artifacts.id }}` / `{{ feedback.id }}` grammar.

One grammar serves the validator (load time) and the renderer (run time), so the two cannot drift.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

PlaceholderKind = Literal["inputs", "artifacts", "feedback"]

#: A well-formed token: kind, reference, optional ``| inline`` filter.
TOKEN = re.compile(
    r"\{\{\s*(inputs|artifacts|feedback)\.([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\|\s*(inline)\s*)?\}\}"
)
#: Anything brace-shaped; judged against TOKEN when its leading word names a kind.
LOOSE = re.compile(r"\{\{[^{}]*\}\}")
_LEADING = re.compile(r"\{\{\s*([A-Za-z_]+)")
#: Leading words that mean "this was meant to be a placeholder" (case-insensitive).
MEANT = frozenset({"inputs", "input", "artifacts", "artifact", "feedback", "feedbacks"})


@dataclass(frozen=True)
class Token:
    """One placeholder occurrence in a text."""

    text: str
    kind: PlaceholderKind | None  # None: malformed
    ref: str
    inline: bool
    start: int


def scan(text: str) -> list[Token]:
    """Every placeholder-like token of ``text``: well-formed ones and malformed ones (kind None).

    Brace pairs whose leading word is not a placeholder kind are literal text and not returned.
    """
    out: list[Token] = []
    for m in LOOSE.finditer(text):
        raw = m.group(0)
        lead = _LEADING.match(raw)
        if lead is None or lead.group(1).lower() not in MEANT:
            continue
        good = TOKEN.fullmatch(raw)
        if good is None:
            out.append(Token(raw, None, "", False, m.start()))
        else:
            kind: PlaceholderKind = good.group(1)  # type: ignore[assignment]
            out.append(Token(raw, kind, good.group(2), good.group(3) is not None, m.start()))
    return out


class ResolveError(Exception):
    """A placeholder could not be resolved at run time."""


Resolver = Callable[[Token], str]


def render(text: str, resolve: Resolver, *, shell: bool = False) -> str:
    """Substitute every well-formed token via ``resolve``; with ``shell``, quote each value.

    In a shell command a substituted value is data, never code: it is passed through
    ``shlex.quote`` so ``x; touch pwned`` stays one argument.
    """

    def sub(m: re.Match[str]) -> str:
        kind: PlaceholderKind = m.group(1)  # type: ignore[assignment]
        tok = Token(m.group(0), kind, m.group(2), m.group(3) is not None, m.start())
        value = resolve(tok)
        return shlex.quote(value) if shell else value

    return TOKEN.sub(sub, text)
