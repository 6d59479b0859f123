"""The value flow: where a value goes once a placeholder hands it to a variable.

bash evaluates a variable's value in arithmetic (``$((v))``, ``[[ $v -eq 1 ]]``, ``${a[v]}``,
``let``), where ``a[$(cmd)]`` runs cmd; and a ``$name`` expanded where code is read (the
program to run, ``eval``'s arguments, an ``sh -c`` script) is code outright. So a value
assigned to such a name — or passed as ``$1`` … to a function, ``set --`` or an ``sh -c``
script that reads it so — is code after all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from omg.graph.shell.programs import DECLARE
from omg.graph.shell.refusals import (
    ARITH_FLOW,
    CODE_FLOW,
    POSITIONAL_CODE_FLOW,
    POSITIONAL_FLOW,
    READ_FLOW,
)

_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


class WordRead(Protocol):
    """A word as the scanner read it."""

    @property
    def text(self) -> str: ...

    ids: list[int]
    raw: str


@dataclass(frozen=True)
class Inner:
    """The script of ``sh -c SCRIPT …``: its text, its arithmetic, the text of its words read
    as code, its arguments' placeholders."""

    script: str
    arithmetic: list[str]
    ids: list[int]
    code: tuple[str, ...] = ()
    runs_stdin: bool = False  # it reads a line (read, mapfile) and runs what it read


_POSITIONAL = re.compile(r"\$\{?[1-9@*]")
#: The operators of [[ … ]] whose operands bash evaluates as arithmetic.
TEST_ARITH = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


class Flow:
    """Where values go after a placeholder hands them to a variable: bash evaluates a
    variable's value in arithmetic, so a value assigned to a name an arithmetic expression
    reads (or passed as $1 … to code that does) is code after all."""

    def __init__(self) -> None:
        self.arithmetic: list[str] = []  # the text of every arithmetic context
        self.assigned: list[tuple[str, list[int]]] = []  # variable ← placeholders
        self.functions: set[str] = set()
        self.calls: list[tuple[str, list[int]]] = []  # command name, its arguments' placeholders
        self.inner: list[int] = []  # arguments of sh -c SCRIPT that SCRIPT reads as arithmetic
        self.reads: list[str] = []  # variables read (read, mapfile) from whatever feeds stdin
        self.copies: list[tuple[str, str]] = []  # variable ← the text of a word expanding others
        self.code: list[str] = []  # the text of every word read as code (a program's name, eval …)
        self.inner_code: list[int] = []  # arguments of sh -c SCRIPT that SCRIPT runs as code

    def assign(self, word: str, ids: list[int], raw: str = "") -> None:
        m = _ASSIGN.match(word)
        if m is None:
            return
        name = m.group(0).rstrip("+=")
        if ids:
            self.assigned.append((name, ids))
        if "$" in raw:
            self.copies.append((name, raw))

    def _carried(self) -> None:
        """Follow copies (w=$v, w="x$v", for w in $v): a name assigned another's value holds
        its placeholders too."""
        changed = True
        while changed:
            changed = False
            for target, raw in self.copies:
                for name, ids in list(self.assigned):
                    if (
                        name != target
                        and _expands(raw, name)
                        and (target, ids) not in self.assigned
                    ):
                        self.assigned.append((target, ids))
                        changed = True

    def test(self, words: list[str]) -> None:
        """The operands of [[ … ]]'s arithmetic comparisons."""
        for k, w in enumerate(words):
            if w in TEST_ARITH:
                self.arithmetic.extend(words[max(k - 1, 0) : k] + words[k + 1 : k + 2])

    def command(self, words: Sequence[WordRead], fed: list[int], inner: Inner | None) -> None:
        """A simple command: ``words`` (its name first), the placeholders its standard input
        holds, and for ``sh -c SCRIPT …`` the arithmetic of SCRIPT and its arguments'."""
        name = words[0].text
        args = [sid for w in words[1:] for sid in w.ids]
        if name == "let":
            self.arithmetic.extend(w.raw for w in words[1:])
        elif name in DECLARE:
            for w in words[1:]:
                self.assign(w.text, w.ids, w.raw)
        elif name == "read":
            for w in words[1:]:
                if not w.text.startswith("-"):
                    self.assigned.append((w.text, fed))
                    self.reads.append(w.text)
        elif name in ("mapfile", "readarray"):
            last = [w.text for w in words[1:] if not w.text.startswith("-")]
            self.reads.append(last[-1] if last else "MAPFILE")
        self.calls.append((name, args))
        if inner is not None:
            self.code.extend(inner.code)  # an exported variable reaches the script too
            if inner.ids and _reads_arguments(inner):
                self.inner.extend(inner.ids)
            elif inner.ids and _runs_arguments(inner):
                self.inner_code.extend(inner.ids)

    def runs_what_it_reads(self) -> bool:
        """Whether a variable read from stdin (or a copy of one) is expanded where code is read."""
        code = "\n".join(self.code)
        for name in self.reads:
            carried = {name} | {t for t, raw in self.copies if _expands(raw, name)}
            if any(_expands(code, n) for n in carried):
                return True
        return False

    def judge(self, refuse: Callable[[int, str], None], total: int) -> None:
        """Refuse what flows into code; ``total`` placeholders in all."""
        self._carried()
        text = "\n".join(self.arithmetic)
        for name, ids in self.assigned:
            if name and _mentions(text, name):
                for sid in ids:
                    refuse(sid, ARITH_FLOW.replace("{name}", name))
        positional = _POSITIONAL.search(text) is not None
        for name, ids in self.calls:
            if positional and (name in self.functions or name == "set"):
                for sid in ids:
                    refuse(sid, POSITIONAL_FLOW)
        for sid in self.inner:
            refuse(sid, POSITIONAL_FLOW)
        code = "\n".join(self.code)
        for name, ids in self.assigned:
            if name and _expands(code, name):
                for sid in ids:
                    refuse(sid, CODE_FLOW.replace("{name}", name))
        positional = _POSITIONAL.search(code) is not None
        for name, ids in self.calls:
            if positional and (name in self.functions or name == "set"):
                for sid in ids:
                    refuse(sid, POSITIONAL_CODE_FLOW)
        for sid in self.inner_code:
            refuse(sid, POSITIONAL_CODE_FLOW)
        if self.runs_what_it_reads():  # what read takes in may be any value: refuse them all
            for sid in range(total):
                refuse(sid, READ_FLOW.replace("{name}", self.reads[0]))


def subscripts(part: str) -> str:
    """The arithmetic of a ${…}: its subscript or offset (${v} and ${v:-x} evaluate nothing)."""
    m = re.match(r"[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])", part)
    if m is None:
        return part
    rest = part[m.end() :]
    out = ""
    if rest.startswith("["):
        close = rest.find("]")
        out, rest = rest[1 : close if close >= 0 else len(rest)], rest[close + 1 :]
    if rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+"):
        out += " " + rest[1:]
    return out


def _reads_arguments(inner: Inner) -> bool:
    """Whether an inner script evaluates an argument ($1 …) as arithmetic, or a variable it
    assigned one to."""
    text = "\n".join(inner.arithmetic)
    if _POSITIONAL.search(text):
        return True
    names = re.findall(
        r"(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)\+?=[^\s;&|]*\$\{?[1-9@*]", inner.script
    )
    return any(_mentions(text, n) for n in names)


def _runs_arguments(inner: Inner) -> bool:
    """Whether an inner script expands an argument ($1 …), or a variable it assigned one to,
    where code is read."""
    code = "\n".join(inner.code)
    if _POSITIONAL.search(code):
        return True
    names = re.findall(
        r"(?:^|[\s;&|(])([A-Za-z_][A-Za-z0-9_]*)\+?=[^\s;&|]*\$\{?[1-9@*]", inner.script
    )
    return any(_expands(code, n) for n in names)


def _expands(text: str, name: str) -> bool:
    """Whether ``text`` expands $name (${name}, ${name:-…}, ${!name} …)."""
    return re.search(rf"\$\{{?[#!]?{re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) is not None
