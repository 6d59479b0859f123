"""Shell frames: what the shell scanner holds while it reads — words, commands, pipelines,
command lists, quotes and heredoc bodies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


class Word:
    """One shell word being read: its text once quotes are removed (an expansion as EXP), the
    placeholders inside it at any depth, and whether it was written without any quoting."""

    __slots__ = ("chars", "ids", "plain", "raw", "start")

    def __init__(self, start: int) -> None:
        self.chars: list[str] = []
        self.ids: list[int] = []
        self.plain = True  # no quoting at all: may be a reserved word
        self.start = start
        self.raw = ""  # its text as written, once it ends

    @property
    def text(self) -> str:
        return "".join(self.chars)


@dataclass
class Heredoc:
    """A here-document: its delimiter, whether it was quoted (no expansion), its placeholders,
    and whether the command it feeds reads it as code."""

    delim: str
    strip: bool
    quoted: bool
    ids: list[int] = field(default_factory=list)
    code: bool = False


@dataclass
class ShellCommand:
    """A simple command: its words, prefix assignments, stdin redirections and heredocs;
    ``first`` is the number of placeholders seen before it."""

    first: int
    words: list[Word] = field(default_factory=list)
    assigns: list[Word] = field(default_factory=list)
    inputs: list[Word] = field(default_factory=list)
    heredocs: list[Heredoc] = field(default_factory=list)
    dup: bool = False  # reads stdin from another descriptor (<&3)


@dataclass
class Pipe:
    """One nesting level's current pipeline: where it started, which stage is being read."""

    start: int  # placeholders seen before the pipeline began
    parent: Pipe | None = None  # the enclosing level's pipeline (a compound, or $( … )'s)
    opened: int = 0  # placeholders seen before this level opened
    stage: int = 0  # which stage is being read: > 0 once a | was crossed
    members: list[ShellCommand] = field(default_factory=list)  # the pipeline's commands
    every: list[ShellCommand] = field(default_factory=list)  # every command of the level
    code: bool = False  # a command of the level reads its standard input as code


class CommandList:
    """A command list: the whole text, a ``$( … )``, or a refused group such as ``a=( … )``."""

    def __init__(self, first: int, closer: str = "", refuse: str = "", parent: Pipe | None = None):
        self.closer = closer
        self.refuse = refuse
        self.word: Word | None = None
        self.cmd = ShellCommand(first)
        self.state = "cmd"
        self.depth = 0  # open ( … ) subshells
        self.dbrack = False
        self.pipes = [Pipe(first, parent, first)]
        self.pending: list[Heredoc] = []
        self.redirect = ""
        self.func_paren = False
        self.compound_code = False
        self.loop = ""  # the variable of the for loop being read
        self.tested: list[str] = []  # the words of the [[ … ]] being read


@dataclass
class Quote:
    """Inside "…" (dq), ${…} (param) or an arithmetic expression (arith), up to ``closer``."""

    kind: Literal["dq", "param", "arith"]
    closer: str = ""
    depth: int = 0
    start: int = 0  # where its text starts (arithmetic and ${…}: read for variable names)


@dataclass
class Body:
    """An expanding heredoc body being read: where it ends, where the text goes on after its
    delimiter, and the command list it belongs to."""

    end: int
    resume: int
    doc: Heredoc
    frame: CommandList


Frame = CommandList | Quote | Body
