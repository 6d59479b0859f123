"""Code words: which arguments of a command a program runs as code, for the shell scanner.

A value in the environment is data to ``sh``; these are the programs that would make it code
again — shells (``sh -c``), ``eval``, interpreters (``python -c``), ``sed``/``awk`` scripts,
``make``, ``ssh`` — and the wrappers (``env``, ``xargs``, ``find -exec`` …) that start them.
A closed list of what omg can see; DESIGN.md says what it cannot.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omg.graph.shell.programs import (
    ALL_CODE,
    AWKS,
    DECLARE,
    EXP,
    FIX_EVAL,
    FIX_NAME,
    FIX_OPTION,
    FIX_PROGRAM,
    FIX_REMOTE,
    FIX_VARIABLE,
    INTERPRETERS,
    SHELLS,
    STDIN_FILES,
    ProgramUse,
    code_variable,
    command_options,
    declare_words,
    interpreter_words,
    is_assignment,
    make_words,
    name_words,
    script_words,
    shell_words,
)

__all__ = ["DECLARE", "EXP", "FIX_VARIABLE", "ProgramUse", "use"]

_PYTHON = re.compile(r"python(\d+(\.\d+)*)?|pypy3?")
#: wrapper → (options taking an argument, how many operands come before the command)
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "nohup": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "coproc": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "--class", "--classdata"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "taskset": (frozenset(), 1),
    "chrt": (frozenset(), 1),
    "exec": (frozenset({"-a"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "unbuffer": (frozenset(), 0),
    "fakeroot": (frozenset(), 0),
    "eatmydata": (frozenset(), 0),
    "npx": (frozenset({"-p", "--package", "-c", "--call"}), 0),
    "xargs": (
        frozenset(
            {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter"}
            | {"--max-args", "--max-procs", "--max-lines", "--max-chars", "--replace"}
        ),
        0,
    ),
}
#: tool → its subcommand that runs a command: ``uv run CMD``, ``bundle exec CMD`` …
SUBCOMMAND_WRAPPERS = {
    "uv": "run",
    "poetry": "run",
    "pipenv": "run",
    "bundle": "exec",
    "pnpm": "exec",
    "yarn": "exec",
    "conda": "run",
    "pixi": "run",
    "hatch": "run",
    "pdm": "run",
}


def use(words: Sequence[str]) -> ProgramUse:
    """How the command ``words`` (its name first) treats each of its words."""
    out = ProgramUse()
    _judge(list(words), 0, out, depth=0)
    return out


def _name(word: str) -> str | None:
    if EXP in word:
        return None
    base = word.rsplit("/", 1)[-1]
    if _PYTHON.fullmatch(base):
        return "python"
    return base


def _judge(words: list[str], at: int, out: ProgramUse, depth: int) -> None:
    """Judge the command starting at ``words[at]`` (its name)."""
    if at >= len(words) or depth > 8:
        return
    name = _name(words[at])
    rest = range(at + 1, len(words))
    if at > 0:
        out.code[at] = (f"the name of the program `{words[at - 1]}` starts", FIX_PROGRAM)
    if name is None:
        for i in rest:
            out.code[i] = ("an argument of a program chosen when the command runs", FIX_PROGRAM)
        return
    if words[at + 1 : at + 2] and words[at + 1] in STDIN_FILES and name != "cat":
        out.stdin_code = name in ALL_CODE or name in SHELLS or name in INTERPRETERS
    if name in ALL_CODE:
        for i in rest:
            out.code[i] = (ALL_CODE[name], FIX_NAME if "name" in ALL_CODE[name] else FIX_EVAL)
    elif name in SHELLS:
        shell_words(words, at, out)
    elif name == "busybox" and at + 1 < len(words):
        _judge(words, at + 1, out, depth + 1)
    elif name in INTERPRETERS:
        interpreter_words(words, at, name, out)
    elif name == "sed":
        script_words(
            words,
            at,
            out,
            "sed",
            frozenset({"-e", "--expression", "-f", "--file"}),
            frozenset({"-l", "--line-length"}),
        )
    elif name in AWKS:
        script_words(
            words,
            at,
            out,
            "awk",
            frozenset({"-f", "--file", "-e", "--source", "-i", "--include", "-l", "--load"}),
            frozenset({"-F", "-v", "--assign", "--field-separator"}),
        )
    elif name in ("make", "gmake"):
        make_words(words, at, out)
    elif name in ("ssh", "scp", "sftp", "su", "script", "flock", "sudo"):
        _remote(words, at, name, out, depth)
    elif name in DECLARE:
        declare_words(words, at, name, out)
    elif name in ("read", "printf", "getopts", "test", "["):
        name_words(words, at, name, out)
    elif name == "command":
        if not any(w in ("-v", "-V") for w in words[at + 1 : at + 3]):
            _wrap(words, at, out, frozenset(), 0, depth)
    elif name == "env":
        _env(words, at, out, depth)
    elif name == "find":
        _find(words, at, out, depth)
    elif name == "xargs":
        _xargs(words, at, out, depth)
    elif name in WRAPPERS:
        opts, skip = WRAPPERS[name]
        _wrap(words, at, out, opts, skip, depth)
    elif name in SUBCOMMAND_WRAPPERS and words[at + 1 : at + 2] == [SUBCOMMAND_WRAPPERS[name]]:
        _wrap(words, at + 1, out, frozenset(), 0, depth)
    else:
        _other(words, at, name, out, depth)


def _other(words: list[str], at: int, name: str, out: ProgramUse, depth: int) -> None:
    """Any other program: its options that run commands, and a shell or interpreter started
    with code among its arguments (``docker run img sh -c …``, ``kubectl exec p -- sh -c …``)."""
    for i, what in command_options(words, at, name, EXP).items():
        out.code[i] = (what, FIX_OPTION)
    for j in range(at + 1, len(words) - 2):
        prog = _name(words[j])
        shell = prog in SHELLS and re.fullmatch(r"-[A-Za-z]*c[A-Za-z]*", words[j + 1])
        if shell or (prog in INTERPRETERS and words[j + 1] in INTERPRETERS[prog][0]):
            _judge(words, j, out, depth + 1)


def _xargs(words: list[str], at: int, out: ProgramUse, depth: int) -> None:
    """``xargs`` splices what it reads into its command: with ``-I``/``-i`` into every word
    holding the replacement string, else after the last — so its stdin is code where that
    lands in code (``xargs -I{} sh -c 'echo {}'``, ``xargs sh -c``)."""
    first, seen = _options(words, at, WRAPPERS["xargs"][0])
    _judge(words, first, out, depth + 1)
    replace = any(o.startswith(("-I", "-i", "--replace")) for o, _ in seen)
    prog = _name(words[first]) if first < len(words) else None
    last_code = prog in SHELLS or prog in INTERPRETERS
    if (replace and any(i > first for i in out.code)) or (
        last_code and len(words) > first + 1 and re.fullmatch(r"-[A-Za-z]*[ce]", words[-1])
    ):
        out.stdin_code = True


def _options(words: list[str], at: int, takes: frozenset[str]) -> tuple[int, list[tuple[str, int]]]:
    """Skip the options after ``words[at]``: (index of the first operand, [(option, index)])."""
    seen: list[tuple[str, int]] = []
    i = at + 1
    while i < len(words):
        w = words[i]
        if w == "--":
            return i + 1, seen
        if w.startswith(EXP) or not w.startswith(("-", "+")) or w in ("-", "+"):
            return i, seen
        seen.append((w, i))
        flag = w.split("=", 1)[0]
        i += 2 if flag in takes and "=" not in w else 1
    return i, seen


def _wrap(
    words: list[str], at: int, out: ProgramUse, takes: frozenset[str], skip: int, depth: int
) -> None:
    first, _ = _options(words, at, takes)
    _judge(words, first + skip, out, depth + 1)


def _remote(words: list[str], at: int, name: str, out: ProgramUse, depth: int) -> None:
    prog = words[at]
    if name in ("ssh", "scp", "sftp"):
        for i in range(at + 1, len(words)):
            out.code[i] = (
                f"an argument of `{prog}`, whose commands and options run through a shell",
                FIX_REMOTE,
            )
        return
    if name == "sudo":
        takes = frozenset(
            {
                "-u",
                "-g",
                "-h",
                "-p",
                "-U",
                "-C",
                "-D",
                "-r",
                "-t",
                "-T",
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--chdir",
            }
        )
        first, seen = _options(words, at, takes)
        if any(o in ("-s", "-i", "--shell", "--login") for o, _ in seen):
            for i in range(first, len(words)):
                out.code[i] = ("a command `sudo -s` runs through a shell", FIX_REMOTE)
            return
        _judge(words, first, out, depth + 1)
        return
    flag = {"su": ("-c", "--command"), "script": ("-c", "--command"), "flock": ("-c",)}[name]
    first, seen = _options(words, at, frozenset({*flag, "-s", "--shell", "-w", "-E"}))
    for opt, i in seen:
        if opt.split("=", 1)[0] in flag:
            target = i if "=" in opt else i + 1
            if target < len(words):
                out.code[target] = (f"a command `{prog} {opt.split('=', 1)[0]}` runs", FIX_REMOTE)
        if opt in ("-s", "--shell") and i + 1 < len(words):
            out.code[i + 1] = (f"the shell `{prog}` starts", FIX_PROGRAM)
    if name == "flock" and first + 1 < len(words):
        _judge(words, first + 1, out, depth + 1)


def _env(words: list[str], at: int, out: ProgramUse, depth: int) -> None:
    i = at + 1
    while i < len(words):
        w = words[i]
        if w in ("-S", "--split-string") or w.startswith(("--split-string=", "-S")):
            target = i if w not in ("-S", "--split-string") else i + 1
            for j in range(target, len(words)):
                out.code[j] = ("a command line `env -S` splits and runs", FIX_REMOTE)
            return
        if w in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif EXP not in w.split("=", 1)[0] and (w.startswith("-") or is_assignment(w)):
            what = code_variable(w.split("=", 1)[0]) if is_assignment(w) else None
            if what is not None:
                out.code[i] = (what, FIX_VARIABLE)
            i += 1
        else:
            break
    _judge(words, i, out, depth + 1)


def _find(words: list[str], at: int, out: ProgramUse, depth: int) -> None:
    i = at + 1
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(words)) if words[j] in (";", "+")), len(words))
            _judge(words[:end], i + 1, out, depth + 1)
            i = end
        i += 1
