"""The shell lexer: shell text read character by character — quotes, ``$…`` expansions,
backticks, comments and heredoc bodies — into the words of its command lists, and each
placeholder met on the way given its spot.

Pure. What a word, an operator, a command or an evaluated expansion means is the scanner's
(``omg.graph.shell.scan``): the lexer calls it at each, through the methods it leaves abstract.
"""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from omg.graph.shell.frames import Body, CommandList, Frame, Heredoc, Pipe, Quote, Word
from omg.graph.shell.programs import EXP
from omg.graph.shell.refusals import (
    ANSI,
    ARITH,
    BACKSLASH,
    BACKTICK,
    DBRACK,
    DOLLAR,
    MULTILINE,
    PARAM,
    QUOTED_BODY,
    SINGLE,
    STDIN,
)

Form = Literal["word", "quoted"]

_NAME_CHAR = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass
class Spot:
    """One placeholder in shell text: its span, its form, or why no value may stand there."""

    start: int
    end: int
    form: Form
    refused: str = ""  # the reason and the fix, with {tok} for the placeholder's text


class Lexer(ABC):
    """Shell text read character by character, with the stack of frames it is inside; the
    scanner subclasses it with what words, operators and commands do."""

    def __init__(self, text: str, spans: Sequence[tuple[int, int]]) -> None:
        self.text = text
        self.n = len(text)
        self.tok = dict(spans)
        self.starts = sorted(self.tok)
        self.spots: list[Spot] = []
        self.body_ids: set[int] = set()
        self.stack: list[Frame] = [CommandList(0)]
        self.pos = 0

    # -- what the scanner decides --------------------------------------------------
    @abstractmethod
    def _operator(self, f: CommandList, i: int) -> int:
        """The control or redirection operator at ``i``; returns where scanning goes on."""

    @abstractmethod
    def _after(self, f: CommandList, op: str) -> None:
        """A control operator ``op`` (or a newline) ended the command before it."""

    @abstractmethod
    def _end_word(self, f: CommandList) -> None:
        """The word being read in ``f`` ends (at ``self.pos``)."""

    @abstractmethod
    def _end_command(self, f: CommandList) -> None:
        """The simple command being read in ``f`` ends."""

    @abstractmethod
    def _evaluated(self, kind: str, span: str) -> None:
        """A ``${…}`` (``kind`` "param") or an arithmetic expression closed: its text."""

    @abstractmethod
    def _judge(self) -> None:
        """The whole text is read: the refusals only all of it shows."""

    # -- the loop ---------------------------------------------------------------
    def run(self) -> list[Spot]:
        i = 0
        while True:
            f = self.stack[-1]
            if isinstance(f, Body) and i >= f.end:
                self.stack.pop()
                i = self._bodies(f.frame, f.resume)
                continue
            if i >= self.n:
                break
            self.pos = i
            if i in self.tok:
                i = self._placeholder(i)
            elif isinstance(f, CommandList):
                i = self._cmd(f, i)
            elif isinstance(f, Body):
                i = self._expanding(f, i, "body")
            elif f.kind == "dq":
                i = self._expanding(f, i, "dq")
            else:
                i = self._nested(f, i)
        self.pos = self.n
        while self.stack:
            f = self.stack.pop()
            if isinstance(f, CommandList):
                self._end_word(f)
                self._end_command(f)
        self._judge()
        return self.spots

    # -- placeholders -------------------------------------------------------------
    def _placeholder(self, i: int, refused: str = "") -> int:
        f = self.stack[-1]
        if isinstance(f, CommandList):
            self._open(f)
        form: Form = "word" if isinstance(f, CommandList) else "quoted"
        return self._register(i, form, refused or self._context())

    def _register(self, i: int, form: Form, refused: str, doc: Heredoc | None = None) -> int:
        end = self.tok[i]
        sid = len(self.spots)
        if "\n" in self.text[i:end]:
            refused = MULTILINE
        self.spots.append(Spot(i, end, form, refused))
        for fr in self.stack:
            if isinstance(fr, CommandList) and fr.word is not None:
                fr.word.ids.append(sid)
                fr.word.chars.append(EXP)
            elif isinstance(fr, Body):
                self._in_doc(fr.doc, sid)
        if doc is not None:
            self._in_doc(doc, sid)
        return end

    def _in_doc(self, doc: Heredoc, sid: int) -> None:
        doc.ids.append(sid)
        self.body_ids.add(sid)
        if doc.code:
            self._refuse(sid, STDIN)

    def _context(self) -> str:
        """The refusal an enclosing construct imposes ($((…)), ${…}, [[ ]], a=( )), if any."""
        for fr in self.stack:
            if isinstance(fr, CommandList):
                if fr.refuse:
                    return fr.refuse
                if fr.dbrack:
                    return DBRACK
            elif isinstance(fr, Quote) and fr.kind != "dq":
                return PARAM if fr.kind == "param" else ARITH
        return ""

    def _unit(self, a: int, b: int, refused: str, doc: Heredoc | None = None) -> int:
        """Placeholders inside [a, b), a span sh does not expand; returns where the span ends."""
        lo = bisect.bisect_left(self.starts, a)
        hi = bisect.bisect_left(self.starts, b)
        for s in self.starts[lo:hi]:
            b = max(b, self._register(s, "quoted", refused, doc))
        return b

    def _refuse(self, sid: int, why: str) -> None:
        if not self.spots[sid].refused:
            self.spots[sid].refused = why

    def _refuse_word(self, w: Word, why: str) -> None:
        for sid in w.ids:
            self._refuse(sid, why)

    # -- a command list ---------------------------------------------------------
    def _open(self, f: CommandList) -> Word:
        if f.word is None:
            f.word = Word(self.pos)
        return f.word

    def _cmd(self, f: CommandList, i: int) -> int:
        t, c = self.text, self.text[i]
        if c == "\\":
            if t.startswith("\n", i + 1):
                return i + 2
            w = self._open(f)
            w.plain = False
            if i + 1 in self.tok:
                return self._placeholder(i + 1, BACKSLASH)
            w.chars.append(t[i + 1 : i + 2])
            return i + 2
        if c in " \t" or (f.dbrack and c in "\n;&|()<>"):
            self._end_word(f)
            return i + 1
        if c == "\n":
            self._end_word(f)
            self._end_command(f)
            self._after(f, "\n")
            return self._bodies(f, i + 1)
        if c == "#" and f.word is None:
            j = t.find("\n", i)
            return self._unit(i, self.n if j < 0 else j, "")
        if c in ";&|()<>":
            return self._operator(f, i)
        if c == '"':
            self._open(f).plain = False
            self.stack.append(Quote("dq"))
            return i + 1
        if c == "'":
            w = self._open(f)
            w.plain = False
            j = t.find("'", i + 1)
            j = self.n if j < 0 else j
            w.chars.append(t[i + 1 : j])
            return self._unit(i + 1, j, SINGLE) + 1
        if c == "$":
            return self._dollar(i)
        if c == "`":
            return self._backtick(i)
        self._open(f).chars.append(c)
        return i + 1

    def _bodies(self, f: CommandList, i: int) -> int:
        """Read the pending heredoc bodies of ``f`` from ``i``: quoted ones at once, the next
        expanding one as a frame; returns where scanning goes on."""
        while f.pending:
            doc = f.pending.pop(0)
            end, resume = self._body_end(doc, i)
            if not doc.quoted:
                self.stack.append(Body(end, resume, doc, f))
                return i
            self._unit(i, end, QUOTED_BODY, doc)
            i = resume
        return i

    def _body_end(self, doc: Heredoc, i: int) -> tuple[int, int]:
        """(where the body starting at ``i`` ends, where the text after its delimiter starts)."""
        t = self.text
        while True:
            k = t.find("\n", i)
            end = self.n if k < 0 else k
            line = t[i:end]
            if (line.lstrip("\t") if doc.strip else line) == doc.delim:
                return i, min(end + 1, self.n)
            if k < 0:
                return self.n, self.n
            i = k + 1

    # -- expansions ---------------------------------------------------------------
    def _expansion(self) -> None:
        """Mark the innermost open word as holding an expansion."""
        for fr in reversed(self.stack):
            if isinstance(fr, CommandList):
                if fr.word is not None or fr is self.stack[-1]:
                    w = self._open(fr)
                    w.chars.append(EXP)
                    w.plain = False
                return

    def _literal(self, s: str) -> None:
        for fr in reversed(self.stack):
            if isinstance(fr, CommandList):
                if fr.word is not None:
                    fr.word.chars.append(s)
                return

    def _pipe(self) -> Pipe | None:
        for fr in reversed(self.stack):
            if isinstance(fr, CommandList):
                return fr.pipes[-1]
        return None

    def _dollar(self, i: int) -> int:
        t = self.text
        nxt = t[i + 1 : i + 2]
        top = self.stack[-1]
        in_cmd = isinstance(top, CommandList)
        if i + 1 in self.tok:
            self._expansion()
            return self._placeholder(i + 1, DOLLAR)
        if nxt == "(":
            self._expansion()
            if t.startswith("(", i + 2):
                self.stack.append(Quote("arith", "))", start=i + 3))
                return i + 3
            self.stack.append(CommandList(len(self.spots), ")", parent=self._pipe()))
            return i + 2
        if nxt == "{":
            self._expansion()
            self.stack.append(Quote("param", start=i + 2))
            return i + 2
        if nxt == "[":
            self._expansion()
            self.stack.append(Quote("arith", "]", start=i + 2))
            return i + 2
        if nxt == "'" and in_cmd:
            self._expansion()
            return self._unit(i + 2, self._ansi_end(i + 2), ANSI) + 1
        if nxt == '"' and in_cmd:
            self._expansion()
            self.stack.append(Quote("dq"))
            return i + 2
        if nxt and nxt in _NAME_CHAR:
            self._expansion()
            j = i + 2
            if not nxt.isdigit():
                while j < self.n and t[j] in _NAME_CHAR:
                    j += 1
            return j
        if nxt and nxt in "@*#?-$!":
            self._expansion()
            return i + 2
        self._literal("$")
        return i + 1

    def _ansi_end(self, i: int) -> int:
        t = self.text
        while i < self.n and t[i] != "'":
            i += 2 if t[i] == "\\" else 1
        return min(i, self.n)

    def _backtick(self, i: int) -> int:
        self._expansion()
        t, j = self.text, i + 1
        while j < self.n and t[j] != "`":
            j += 2 if t[j] == "\\" else 1
        j = min(j, self.n)
        return self._unit(i + 1, j, BACKTICK) + 1

    def _expanding(self, f: Quote | Body, i: int, ctx: str) -> int:
        """Inside "…" or an unquoted heredoc body: $, backticks and \\ are live."""
        t, c = self.text, self.text[i]
        if c == '"' and ctx == "dq":
            self.stack.pop()
            return i + 1
        if c == "\\":
            if i + 1 in self.tok:
                return self._placeholder(i + 1, BACKSLASH)
            nxt = t[i + 1 : i + 2]
            if nxt in ("$", "`", "\\", "\n") or (nxt == '"' and ctx == "dq"):
                if nxt != "\n":
                    self._literal(nxt)
                return i + 2
            self._literal(c)
            return i + 1
        if c == "$":
            return self._dollar(i)
        if c == "`":
            return self._backtick(i)
        self._literal(c)
        return i + 1

    def _nested(self, f: Quote, i: int) -> int:
        """Inside ${…} or an arithmetic expression: find its end; every placeholder is refused."""
        t, c = self.text, self.text[i]
        end = 0
        if (f.kind == "param" and c == "}") or (f.closer == "]" and c == "]"):
            end = i + 1
        elif f.closer == "))" and c == "(":
            f.depth += 1
        elif f.closer == "))" and c == ")":
            if f.depth == 0:
                end = i + (2 if t.startswith("))", i) else 1)
            f.depth -= 1
        if end:
            self.stack.pop()
            self._evaluated(f.kind, t[f.start : i])
            return end
        if c == "\\":
            if i + 1 in self.tok:
                return self._placeholder(i + 1, BACKSLASH)
            return i + 2
        if c == '"':
            self.stack.append(Quote("dq"))
            return i + 1
        if c == "'":
            j = t.find("'", i + 1)
            j = self.n if j < 0 else j
            return self._unit(i + 1, j, SINGLE) + 1
        if c == "$":
            return self._dollar(i)
        if c == "`":
            return self._backtick(i)
        return i + 1
