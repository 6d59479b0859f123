"""Placeholder tokens: the `{{ inputs.x }}` / `{{ artifacts.id }}` / `{{ feedback.id }}` /
`{{ outputs.id.field }}` / `{{ guidance }}` grammar, found in a text and substituted.

One grammar serves the validator (load time) and the renderer (run time), so the two cannot drift;
a leaf, so the checks and the shell rendering (``placeholders``) stand side by side on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from omg.graph.shell.lexer import Spot

PlaceholderKind = Literal["inputs", "artifacts", "feedback", "outputs", "guidance"]

#: A well-formed token: kind, reference, optional ``| inline`` filter. ``{{ guidance }}`` (the
#: words a person gave a re-armed node) is the one kind without a reference.
TOKEN = re.compile(
    r"\{\{\s*(?:(inputs|artifacts|feedback|outputs)\.([A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*){0,3})|(guidance))\s*(?:\|\s*(inline)\s*)?\}\}"
)
#: Anything brace-shaped; judged against TOKEN when its leading word names a kind.
LOOSE = re.compile(r"\{\{[^{}]*\}\}")
_LEADING = re.compile(r"\{\{\s*([A-Za-z_]+)")
#: Leading words that mean "this was meant to be a placeholder" (case-insensitive).
MEANT = frozenset(
    {"inputs", "input", "artifacts", "artifact", "feedback", "feedbacks", "outputs", "output",
     "guidance"}
)  # fmt: skip


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
        if good is None or (good.group(3) is not None and good.group(4) is not None):
            out.append(Token(raw, None, "", False, m.start()))  # guidance takes no filter
        else:
            out.append(token(good, m.start()))
    return out


Resolver = Callable[[Token], str]


def render(text: str, resolve: Resolver) -> str:
    """Substitute every well-formed token via ``resolve`` (prompts, paths, branch names)."""

    def sub(m: re.Match[str]) -> str:
        return resolve(token(m))

    return TOKEN.sub(sub, text)


def token(m: re.Match[str], start: int | None = None) -> Token:
    kind: PlaceholderKind = m.group(1) or m.group(3)  # type: ignore[assignment]
    at = m.start() if start is None else start
    return Token(m.group(0), kind, m.group(2) or "", m.group(4) is not None, at)


def spans(text: str) -> list[tuple[int, int]]:
    """Where each well-formed token of ``text`` starts and ends."""
    return [(m.start(), m.end()) for m in TOKEN.finditer(text)]


def refusal(spot: Spot, token: str) -> str:
    """A refused spot's reason, told about ``token``."""
    return f"{token} {spot.refused.replace('{tok}', token)}"
