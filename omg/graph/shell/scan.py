"""The shell scanner: where each placeholder of a shell command stands, and whether a value may.

Pure. A lexer of POSIX sh (quotes, ``$(…)``, backticks, heredocs, compound commands, pipelines;
``omg.graph.shell.lexer``) plus the bash forms that read a value again (arithmetic, ``[[ ]]``,
``${…}``), with the table of programs that run an argument as code (``omg.graph.shell.words``).
A placeholder either gets a form — ``word`` (unquoted: replaced by ``"${V}"``) or ``quoted``
(inside ``"…"``, an expanding heredoc or a comment: ``${V}``) — or a refusal that says why and
what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omg.graph.shell import words
from omg.graph.shell.flow import Flow, Inner, subscripts
from omg.graph.shell.frames import CommandList, Heredoc, Pipe, Quote, ShellCommand, Word
from omg.graph.shell.lexer import Lexer, Spot
from omg.graph.shell.programs import code_variable
from omg.graph.shell.refusals import (
    ARRAY,
    CODE,
    COMMAND,
    DELIMITER,
    FUNCTION_NAME,
    INTEGER,
    LOOP_NAME,
    STDIN,
)
from omg.graph.shell.words import EXP, FIX_VARIABLE

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


def spots(text: str, spans: Sequence[tuple[int, int]]) -> list[Spot]:
    """The spot of each placeholder span (start, end) of ``text``, in order (a command without
    placeholders, as most are, has none and is not read)."""
    return _Scanner(text, spans).run() if spans else []


class _Scanner(Lexer):
    def __init__(self, text: str, spans: Sequence[tuple[int, int]]) -> None:
        super().__init__(text, spans)
        self.integers = _INTEGERS.search(text) is not None
        self.flow = Flow()
        self.fd_fed: list[int] = []  # placeholders of here-strings (heredocs: body_ids)
        self.dup_code = False  # a shell or interpreter reads its code from another descriptor

    def _judge(self) -> None:
        if self.dup_code:  # exec 3<<EOF … sh <&3: any heredoc or here-string may be that fd
            for sid in sorted(self.body_ids) + self.fd_fed:
                self._refuse(sid, STDIN)
        self.flow.judge(self._refuse, len(self.spots))

    def _evaluated(self, kind: str, span: str) -> None:
        self.flow.arithmetic.append(subscripts(span) if kind == "param" else span)
        prompt = _PROMPT.match(span) if kind == "param" else None
        if prompt is not None:  # ${v@P}: bash expands $(…) in v's value, as in a prompt
            self.flow.code.append("${" + prompt.group(1) + "}")

    # -- operators ------------------------------------------------------------------
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
                f.cmd = ShellCommand(len(self.spots))
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
        f.cmd = ShellCommand(len(self.spots))
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

    def _inner(self, cmd: ShellCommand, at: tuple[int, int] | None) -> Inner | None:
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

    def _fed(self, f: CommandList, cmd: ShellCommand) -> None:
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
