"""Placeholders rendered: in shell text a placeholder (``tokens``, the grammar) becomes a
reference to an environment variable and its value travels in the child's environment, so sh
never parses a value (``render_shell``); an ``env:`` value is data its variable carries as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from omg.graph.limits import VARIABLE_PREFIX
from omg.graph.tokens import TOKEN, Resolver, Token, refusal, render, spans, token

if TYPE_CHECKING:
    from omg.graph.shell.lexer import Spot

#: The shell scanner's signature: where each placeholder span of a command stands.
Scan = Callable[[str, Sequence[tuple[int, int]]], "list[Spot]"]


class ResolveError(Exception):
    """A placeholder could not be resolved at run time."""


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


def render_shell(text: str, scan: Scan, resolve: Resolver) -> ShellText:
    """The script sh runs for ``text`` and the values its placeholders stand for; ``scan`` is
    the shell scanner (``omg.graph.shell.scan.spots``), handed in so rendering sits beside the
    scanner rather than above it, and called here on ``text`` itself.

    Raises ResolveError for a placeholder where no value may stand (the loader refuses those),
    and for a value no environment variable can carry (a NUL, non-text bytes, over 128 KiB).
    """
    names: dict[tuple[str, str, bool], str] = {}
    values: list[Value] = []
    parts: list[str] = []
    last = 0
    for spot in scan(text, spans(text)):
        m = TOKEN.fullmatch(text, spot.start, spot.end)
        assert m is not None
        tok = token(m)
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
