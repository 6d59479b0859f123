"""The shell scanner: where each placeholder of a shell command stands, and whether a value may.

Pure. A lexer of POSIX sh (quotes, ``$(…)``, backticks, heredocs, compound commands, pipelines)
plus the bash forms that read a value again (arithmetic, ``[[ ]]``, ``${…}``), with the table of
programs that run an argument as code (``omg.graph.shell.words``). A placeholder either gets a
form — ``word`` (unquoted: replaced by ``"${V}"``) or ``quoted`` (inside ``"…"``, an expanding
heredoc or a comment: ``${V}``) — or a refusal that says why and what to write instead.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from omg.graph.shell import words
from omg.graph.shell.flow import Flow, Inner, subscripts
from omg.graph.shell.frames import Body, Command, CommandList, Frame, Heredoc, Pipe, Quote, Word
from omg.graph.shell.options import code_variable
from omg.graph.shell.refusals import (
    ANSI,
    ARITH,
    ARRAY,
    BACKSLASH,
    BACKTICK,
    CODE,
    COMMAND,
    DBRACK,
    DELIMITER,
    DOLLAR,
    FUNCTION_NAME,
    INTEGER,
    LOOP_NAME,
    MULTILINE,
    PARAM,
    QUOTED_BODY,
    SINGLE,
    STDIN,
)
from omg.graph.shell.words import EXP, FIX_VARIABLE

Form = Literal["word", "quoted"]

#: Operators, longest first.
OPERATORS = (
    ";;&", "&>>", "<<<", "<<-", ";;", ";&", "&&", "||", "|&", "&>", "<<", "<&", "<>", "<(",
    ">>", ">&", ">|", ">(", ";", "&", "|", "(", ")", "<", ">",
)  # fmt: skip
REDIRECTS = frozenset({"<", ">", ">>", "<&", ">&", "<>", ">|", "&>", "&>>", "<<", "<<-", "<<<"})
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_INTEGERS = re.compile(
    r"(?:^|[\s;&|(])(?:declare|typeset|local|export|readonly)\s+(?:[-+]\w+\s+)*[-+]\w*[in]"
)
_SINGLE = re.compile(r"'[^']*'")
_PROMPT = re.compile(r"[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*])(?:\[[^\]]*\])?@P$")
_NAME_CHAR = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass
class Spot:
    """One placeholder in shell text: its span, its form, or why no value may stand there."""

    start: int
    end: int
    form: Form
    refused: str = ""  # the reason and the fix, with {tok} for the placeholder's text


def spots(text: str, spans: Sequence[tuple[int, int]]) -> list[Spot]:
    """The spot of each placeholder span (start, end) of ``text``, in order."""
    return _Scanner(text, spans).run()


class _Scanner:
    def __init__(self, text: str, spans: Sequence[tuple[int, int]]) -> None:
        self.text = text
        self.n = len(text)
        self.tok = dict(spans)
        self.starts = sorted(self.tok)
        self.spots: list[Spot] = []
        self.body_ids: set[int] = set()
        self.integers = _INTEGERS.search(text) is not None
        self.stack: list[Frame] = [CommandList(0)]
        self.flow = Flow()
        self.fd_fed: list[int] = []  # placeholders of here-strings (heredocs: body_ids)
        self.dup_code = False  # a shell or interpreter reads its code from another descriptor
        self.pos = 0

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
        if self.dup_code:  # exec 3<<EOF … sh <&3: any heredoc or here-string may be that fd
            for sid in sorted(self.body_ids) + self.fd_fed:
                self._refuse(sid, STDIN)
        self.flow.judge(self._refuse, len(self.spots))
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

    def _operator(self, f: CommandList, i: int) -> int:
        t = self.text
        op = next(o for o in OPERATORS if t.startswith(o, i))
        if op in ("<(", ">("):
            self._expansion()
            self.stack.append(CommandList(len(self.spots), ")", parent=f.pipes[-1]))
            return i + 2
        if op in REDIRECTS:
            w = f.word
            if w is not None and w.plain and not w.ids and w.text.isdigit():
                f.word = None  # an fd number: 2>…
            else:
                self._end_word(f)
            f.redirect = op
            return i + len(op)
        if op == "(":
            w = f.word
            if w is not None and _ASSIGN.fullmatch(w.text):
                self.stack.append(CommandList(len(self.spots), ")", ARRAY))
                return i + 1
            self._end_word(f)
            if f.state == "case-pattern":
                return i + 1
            if f.state == "func-body" or (
                f.state == "arg" and len(f.cmd.words) == 1 and not f.cmd.assigns
            ):
                if f.state == "arg":
                    self.flow.functions.add(f.cmd.words[0].text)
                f.func_paren = True
                return i + 1
            if t.startswith("((", i):
                self.stack.append(Quote("arith", "))", start=i + 2))
                return i + 2
            f.depth += 1
            self._level(f)
            f.state = "cmd"
            return i + 1
        if op == ")":
            self._end_word(f)
            if f.func_paren:
                f.func_paren = False
                f.cmd = Command(len(self.spots))
                f.state = "cmd"
                return i + 1
            if f.state == "case-pattern":
                f.state = "cmd"
                return i + 1
            self._end_command(f)
            if f.depth > 0:
                f.depth -= 1
                self._unlevel(f)
                f.state = "arg"
            elif f.closer == ")":
                self.stack.pop()
            return i + 1
        if op in ("|", "|&") and f.state == "case-pattern":
            self._end_word(f)
            return i + len(op)
        self._end_word(f)
        self._end_command(f)
        self._after(f, op)
        return i + len(op)

    def _after(self, f: CommandList, op: str) -> None:
        """What a control operator (or a newline) does to the state and the pipeline."""
        f.compound_code = False
        if op in ("|", "|&"):
            f.pipes[-1].stage += 1
            f.state = "cmd"
            return
        self._pipeline(f)
        if op in (";;", ";&", ";;&"):
            f.state = "case-pattern"
        elif not f.state.startswith(("case-", "func-")):
            f.state = "cmd"

    def _pipeline(self, f: CommandList) -> None:
        pipe = f.pipes[-1]
        pipe.start = len(self.spots)
        pipe.stage = 0
        pipe.members = []

    def _level(self, f: CommandList) -> None:
        f.pipes.append(Pipe(len(self.spots), f.pipes[-1], len(self.spots)))

    def _unlevel(self, f: CommandList) -> None:
        if len(f.pipes) > 1:
            inner = f.pipes.pop()
            outer = f.pipes[-1]
            outer.members.extend(inner.every)
            outer.every.extend(inner.every)
            outer.code = outer.code or inner.code
            f.compound_code = inner.code

    # -- words ------------------------------------------------------------------
    def _end_word(self, f: CommandList) -> None:
        w = f.word
        if w is None:
            return
        f.word = None
        w.raw = self.text[w.start : self.pos]
        if f.redirect:
            op, f.redirect = f.redirect, ""
            self._target(f, op, w)
            return
        text = w.text
        word = text if w.plain and EXP not in text else None
        st = f.state
        if f.dbrack:
            if word == "]]":
                f.dbrack = False
                f.state = "arg"
                self.flow.test(f.tested)
                f.tested = []
            else:
                f.tested.append(w.raw)
            return
        if st == "cmd":
            self._command_word(f, w, word)
        elif st == "arg":
            f.cmd.words.append(w)
        elif st == "for-name":
            self._refuse_word(w, LOOP_NAME)
            f.loop = w.text
            f.state = "for-in"
        elif st == "for-in":
            f.state = "cmd" if word == "do" else "for-words"
        elif st == "for-words":
            self.flow.assigned.append((f.loop, w.ids))
            if "$" in w.raw:
                self.flow.copies.append((f.loop, w.raw))
        elif st == "case-subject":
            f.state = "case-in"
        elif st == "case-in":
            if word == "in":
                f.state = "case-pattern"
        elif st == "case-pattern":
            if word == "esac":
                self._unlevel(f)
                f.state = "arg"
        elif st == "func-name":
            self._refuse_word(w, FUNCTION_NAME)
            self.flow.functions.add(w.text)
            f.state = "func-body"
        elif st == "func-body":
            if word == "{":
                self._level(f)
            f.state = "cmd"

    def _command_word(self, f: CommandList, w: Word, word: str | None) -> None:
        if word in ("if", "while", "until", "{"):
            self._level(f)
        elif word in ("then", "do", "else", "elif"):
            self._pipeline(f)
        elif word in ("}", "fi", "done", "esac"):
            self._unlevel(f)
            f.state = "arg"
        elif word in ("for", "select"):
            self._level(f)
            f.state = "for-name"
        elif word == "case":
            self._level(f)
            f.state = "case-subject"
        elif word == "function":
            f.state = "func-name"
        elif word == "[[":
            f.dbrack = True
        elif word == "!":
            pass
        elif _ASSIGN.match(w.text) and not f.cmd.words:
            f.cmd.assigns.append(w)
            self.flow.assign(w.text, w.ids, w.raw)
        else:
            f.cmd.words.append(w)
            f.state = "arg"

    def _target(self, f: CommandList, op: str, w: Word) -> None:
        if op in ("<<", "<<-"):
            self._refuse_word(w, DELIMITER)
            doc = Heredoc(w.text.replace(EXP, ""), op == "<<-", not w.plain)
            f.cmd.heredocs.append(doc)
            f.pending.append(doc)
        elif op in ("<", "<<<", "<>"):
            f.cmd.inputs.append(w)
            if op == "<<<":
                self.fd_fed.extend(w.ids)
        elif op == "<&":
            f.cmd.dup = True

    def _end_command(self, f: CommandList) -> None:
        cmd = f.cmd
        f.cmd = Command(len(self.spots))
        f.redirect = ""
        if not (cmd.words or cmd.assigns or cmd.inputs or cmd.heredocs):
            return
        pipe = f.pipes[-1]
        stdin = f.compound_code and not cmd.words
        f.compound_code = False
        if cmd.words:
            self._refuse_word(cmd.words[0], COMMAND)
            use = words.use([w.text for w in cmd.words])
            for idx, (what, fix) in sorted(use.code.items()):
                why = CODE.replace("{what}", what).replace("{fix}", fix)
                self._refuse_word(cmd.words[idx], why)
            stdin = use.stdin_code
            script = use.inner[0] if use.inner is not None else -1
            for idx in {0, *use.code}:  # an sh -c script's own text is judged as _inner's
                raw = cmd.words[idx].raw
                self.flow.code.append(_SINGLE.sub("", raw) if idx == script else raw)
            inner = self._inner(cmd, use.inner)
            self.flow.command(cmd.words, [sid for w in cmd.inputs for sid in w.ids], inner)
            stdin = stdin or (inner is not None and inner.runs_stdin)  # sh -c 'read l; $l'
            if self.integers and cmd.words[0].text in words.DECLARE:
                for w in cmd.words:
                    self._refuse_word(w, INTEGER)
        for w in cmd.assigns:
            if self.integers:
                self._refuse_word(w, INTEGER)
            chooses = code_variable(w.text.split("=", 1)[0].rstrip("+"))
            if chooses is not None:
                why = CODE.replace("{what}", chooses).replace("{fix}", FIX_VARIABLE)
                self._refuse_word(w, why)
        pipe.members.append(cmd)
        pipe.every.append(cmd)
        if stdin and cmd.dup:
            self.dup_code = True
        if stdin:
            pipe.code = True
            for w in cmd.inputs:
                self._refuse_word(w, STDIN)
            for doc in cmd.heredocs:
                self._code(doc)
            self._fed(f, cmd)

    def _inner(self, cmd: Command, at: tuple[int, int] | None) -> Inner | None:
        """The literal script of ``sh -c SCRIPT …``, scanned for the arithmetic it does."""
        if at is None:
            return None
        script, first = at
        inner = _Scanner(cmd.words[script].text, [])
        inner.run()
        ids = [sid for w in cmd.words[first:] for sid in w.ids]
        text = cmd.words[script].text
        code = tuple(inner.flow.code)
        return Inner(text, inner.flow.arithmetic, ids, code, inner.flow.runs_what_it_reads())

    def _code(self, doc: Heredoc) -> None:
        doc.code = True
        for sid in doc.ids:
            self._refuse(sid, STDIN)

    def _fed(self, f: CommandList, cmd: Command) -> None:
        """``cmd`` reads code on stdin: refuse what earlier pipeline stages send it."""
        pipe: Pipe | None = f.pipes[-1]
        upto = cmd.first
        while pipe is not None:
            if pipe.stage > 0:
                for sid in range(pipe.start, upto):
                    if sid not in self.body_ids:
                        self._refuse(sid, STDIN)
                for member in pipe.members:
                    for doc in member.heredocs:
                        self._code(doc)
                return
            upto = pipe.opened
            pipe = pipe.parent

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
            span = t[f.start : i]
            self.flow.arithmetic.append(subscripts(span) if f.kind == "param" else span)
            prompt = _PROMPT.match(span) if f.kind == "param" else None
            if prompt is not None:  # ${v@P}: bash expands $(…) in v's value, as in a prompt
                self.flow.code.append("${" + prompt.group(1) + "}")
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
