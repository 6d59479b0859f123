"""Placeholders: the `{{ inputs.x }}` / `{{ artifacts.id }}` / `{{ feedback.id }}` /
`{{ outputs.id.field }}` / `{{ guidance }}` grammar.

One grammar serves the validator (load time) and the renderer (run time), so the two cannot drift.
In shell text a placeholder becomes a reference to an environment variable and its value travels
in the child's environment, so sh never parses a value (``render_shell``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from omg.graph.limits import VARIABLE_PREFIX
from omg.graph.shell.lexer import Spot
from omg.graph.shell.scan import spots

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
            out.append(_token(good, m.start()))
    return out


class ResolveError(Exception):
    """A placeholder could not be resolved at run time."""


Resolver = Callable[[Token], str]


def render(text: str, resolve: Resolver) -> str:
    """Substitute every well-formed token via ``resolve`` (prompts, paths, branch names)."""

    def sub(m: re.Match[str]) -> str:
        return resolve(_token(m))

    return TOKEN.sub(sub, text)


def _token(m: re.Match[str], start: int | None = None) -> Token:
    kind: PlaceholderKind = m.group(1) or m.group(3)  # type: ignore[assignment]
    at = m.start() if start is None else start
    return Token(m.group(0), kind, m.group(2) or "", m.group(4) is not None, at)


#: The most bytes one ``NAME=value`` environment string may hold on Linux (MAX_ARG_STRLEN).
ENV_STRING_LIMIT = 128 * 1024


@dataclass(frozen=True)
class Value:
    """One substituted value: the variable that carries it and the placeholder it fills."""

    variable: str
    placeholder: str
    value: str


@dataclass(frozen=True)
class ShellText:
    """A shell command whose placeholders are references (``"${OMG_P1}"``) to variables that
    ``values`` carry in the child's environment: sh parses the script, never a value."""

    script: str
    values: tuple[Value, ...] = ()

    @property
    def env(self) -> dict[str, str]:
        return {v.variable: v.value for v in self.values}


def shell_spots(text: str) -> list[Spot]:
    """Where each placeholder of a shell command stands (``omg.graph.shell.scan``)."""
    return spots(text, [(m.start(), m.end()) for m in TOKEN.finditer(text)])


def refusal(spot: Spot, token: str) -> str:
    """A refused spot's reason, told about ``token``."""
    return f"{token} {spot.refused.replace('{tok}', token)}"


def render_shell(text: str, resolve: Resolver) -> ShellText:
    """The script sh runs for ``text`` and the values its placeholders stand for.

    Raises ResolveError for a placeholder where no value may stand (the loader refuses those),
    and for a value no environment variable can carry (a NUL, non-text bytes, over 128 KiB).
    """
    names: dict[tuple[str, str, bool], str] = {}
    values: list[Value] = []
    parts: list[str] = []
    last = 0
    for spot in shell_spots(text):
        m = TOKEN.fullmatch(text, spot.start, spot.end)
        assert m is not None
        tok = _token(m)
        if spot.refused:
            raise ResolveError(f"cannot run the command: {refusal(spot, tok.text)}")
        key = (str(tok.kind), tok.ref, tok.inline)
        name = names.get(key)
        if name is None:
            name = names[key] = f"{VARIABLE_PREFIX}{len(names) + 1}"
            values.append(Value(name, tok.text, _carried(tok, name, resolve(tok))))
        ref = "${" + name + "}"
        parts += [text[last : spot.start], f'"{ref}"' if spot.form == "word" else ref]
        last = spot.end
    parts.append(text[last:])
    return ShellText("".join(parts), tuple(values))


def render_value(text: str, resolve: Resolver, name: str) -> str:
    """An ``env:`` value with its placeholders rendered: data the variable ``name`` carries as
    it is (never shell text), or a ResolveError for a value no variable can carry."""
    value = render(text, resolve)
    return _carried(Token(f"env {name}'s {text}", None, "", False, 0), name, value)


def _carried(tok: Token, name: str, value: str) -> str:
    """``value`` if an environment variable can carry it, else a ResolveError that says why."""
    if "\0" in value:
        raise ResolveError(
            f"cannot substitute {tok.text}: its value holds a NUL byte, which no environment "
            "variable can carry; use the path form {{ artifacts.<id> }} and read the file"
        )
    try:
        size = len(value.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        raise ResolveError(f"cannot substitute {tok.text}: its value is not text") from None
    if size + len(name) + 2 > ENV_STRING_LIMIT:
        raise ResolveError(
            f"cannot substitute {tok.text}: its value is {size:,} bytes, more than the 128 KiB "
            "one environment variable holds; use the path form {{ artifacts.<id> }} and read "
            "the file"
        )
    return value
