"""Code programs: which words, options and environment variables of a program it runs as code.

How shells, interpreters, sed, awk, make and the shell's builtins read their words; the options
and variables through which a program runs a command (``git -c core.pager=…``,
``tar --to-command=…``, ``GIT_SSH_COMMAND=…``, ``PATH=…``) — and a value at the start of an
argument of these programs may be taken for such an option (``--upload-pack=…``) unless ``--``
comes first. Tables and judges for ``omg.graph.shell.words``; a leaf: it imports nothing else
of omg, so the scanner's modules stand side by side on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Where a word holds an expansion (``$x``, ``$(…)``, a placeholder), the scanner puts this.
EXP = "\ue000"

#: Builtins whose arguments are assignments (``export NAME=value``).
DECLARE = frozenset({"export", "readonly", "declare", "typeset", "local"})

#: Variables whose value a shell or a program runs, loads or searches for programs.
CODE_VARIABLES = frozenset(
    {
        "PATH", "BASH_ENV", "ENV", "PS4", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "CDPATH",
        "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "NODE_OPTIONS",
        "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "GIT_SSH",
        "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_ASKPASS",
        "GIT_PROXY_COMMAND", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "PAGER", "EDITOR", "VISUAL",
        "MANPAGER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "BROWSER", "CC",
        "CXX", "MAKEFLAGS", "MFLAGS", "SHELL", "TAR_OPTIONS", "GZIP", "RSYNC_RSH",
    }
)  # fmt: skip
_CODE_PREFIXES = ("LD_", "DYLD_", "GIT_CONFIG", "BASH_FUNC_")

#: program → {option: what its argument is}; ``--opt=value`` and ``-o value`` both count.
COMMAND_OPTIONS: dict[str, dict[str, str]] = {
    "git": {
        "-c": "a git setting (core.pager, alias.x=!…) git runs as a command",
        "--config-env": "a git setting git runs as a command",
        "--upload-pack": "a command git runs",
        "-u": "a command git runs",
        "--receive-pack": "a command git runs",
        "--exec": "a command git runs",
        "--exec-path": "where git finds the programs it runs",
    },
    "rsync": {"-e": "the remote shell rsync runs", "--rsh": "the remote shell rsync runs",
              "--rsync-path": "a command rsync runs remotely"},
    "tar": {"--to-command": "a command tar runs", "-I": "a program tar runs",
            "--use-compress-program": "a program tar runs",
            "--checkpoint-action": "a command tar runs", "--rsh-command": "a command tar runs",
            "-F": "a script tar runs", "--info-script": "a script tar runs",
            "--new-volume-script": "a script tar runs"},
    "zip": {"-TT": "a command zip runs", "--unzip-command": "a command zip runs"},
    "less": {"+": "a command less runs"},
    "man": {"-P": "the pager man runs", "--pager": "the pager man runs"},
    "vim": {"-c": "a command vim runs", "+": "a command vim runs", "--cmd": "a command vim runs"},
    "wget": {"--use-askpass": "a command wget runs", "-e": "a wgetrc command wget runs",
             "--execute": "a wgetrc command wget runs"},
    "curl": {"-K": "a file of options curl reads", "--config": "a file of options curl reads"},
    "docker": {"--entrypoint": "the program the container runs"},
    "podman": {"--entrypoint": "the program the container runs"},
}  # fmt: skip
for _alias, _of in (("vi", "vim"), ("nvim", "vim"), ("more", "less"), ("scp", "rsync")):
    COMMAND_OPTIONS.setdefault(_alias, COMMAND_OPTIONS[_of])
#: Programs with options that run commands, so an operand that is a value needs -- first.
OPTION_INJECTABLE = frozenset({"git", "rsync", "scp", "tar", "zip", "less", "more", "man", "wget"})


def code_variable(name: str) -> str | None:
    """What a value assigned to ``name`` would choose, or None for an ordinary variable."""
    if name in CODE_VARIABLES or name.startswith(_CODE_PREFIXES):
        return f"${name}, which chooses a program or code that runs"
    return None


def command_options(words: list[str], at: int, name: str, exp: str) -> dict[int, str]:
    """index → what it is, for the words of ``words[at:]`` that run a command, or that such a
    program may take for an option: a value at the start of an operand before ``--``."""
    table = COMMAND_OPTIONS.get(name)
    if table is None:
        return {}
    out: dict[int, str] = {}
    ended = False
    for i in range(at + 1, len(words)):
        w = words[i]
        if w in ("--", "--end-of-options"):
            ended = True
        if ended:
            continue
        for opt, what in table.items():
            if w == opt and i + 1 < len(words):
                out[i + 1] = what
            elif w.startswith(opt + "=") or (
                w.startswith(opt) and len(w) > len(opt) and (opt == "+" or len(opt) == 2)
            ):
                out[i] = what
        before = words[i - 1] if i > at + 1 else ""
        takes_it = before.startswith("-") and "=" not in before and exp not in before
        if w.startswith(exp) and name in OPTION_INJECTABLE and not takes_it and i not in out:
            out[i] = f"an operand `{name}` may take for an option (like --upload-pack=…)"
    return out


SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "ash", "yash", "posh", "fish", "rbash"}
)
FIX_SHELL = "pass it as an argument the script reads: sh -c '… \"$1\"' sh {tok}"
FIX_INTERP = "pass it as an argument the code reads: python3 -c 'import sys; …sys.argv[1]…' {tok}"
FIX_DATA = "pass it where the program takes data, e.g. awk -v v={tok} '…v…'"
FIX_MAKE = 'pass it in the environment (V={tok} make …) and write "$$V" in the recipe'
FIX_REMOTE = "keep values out of the command it runs; send them as data (on stdin, in a file)"
FIX_PROGRAM = "name the program in the command and pass the value as an argument"
FIX_NAME = "write the name in the command and pass the value as data"
FIX_OPTION = (
    "put -- before values that are operands, and keep values out of options that run commands"
)
FIX_VARIABLE = "keep values out of variables that choose what runs; give the value another name"
FIX_EVAL = 'do not run a value as code; pass it as an argument to a script that reads "$1"'
#: Builtins whose every argument is code (or a name or pattern bash evaluates).
ALL_CODE = {
    "eval": "code `eval` runs",
    ".": "a file `.` runs as shell code",
    "source": "a file `source` runs as shell code",
    "trap": "code `trap` runs",
    "alias": "an alias, which the shell runs as code",
    "let": "an arithmetic expression `let` evaluates (bash runs a[$(…)] in it)",
    "unset": "a variable name `unset` takes (bash evaluates a[$(…)] in it)",
    "compgen": "words `compgen` expands as shell code",
    "complete": "words `complete` expands as shell code",
    "enable": "a builtin `enable` loads",
    "fc": "commands `fc` runs",
    "mapfile": "an array name or callback (bash evaluates both)",
    "readarray": "an array name or callback (bash evaluates both)",
    "watch": "a command `watch` runs through sh -c",
    "parallel": "a command GNU parallel runs through the shell",
}
#: A script operand that is the standard input: the program reads its stdin as code.
STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-"})
#: interpreter → (options whose next word is code, options taking a plain argument)
INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "python": (frozenset({"-c", "-m"}), frozenset({"-W", "-X", "-Q"})),
    "perl": (frozenset({"-e", "-E", "-M", "-m"}), frozenset({"-I", "-x", "-i", "-l", "-0"})),
    "ruby": (frozenset({"-e", "-r"}), frozenset({"-I", "-C", "-E", "-F"})),
    "node": (
        frozenset({"-e", "--eval", "-p", "--print", "-r", "--require", "--import"}),
        frozenset({"--input-type", "--conditions", "-C"}),
    ),
    "php": (frozenset({"-r", "-f", "-B", "-R", "-F", "-E"}), frozenset({"-d", "-c", "-z"})),
    "lua": (frozenset({"-e", "-l"}), frozenset()),
    "Rscript": (frozenset({"-e"}), frozenset()),
    "osascript": (frozenset({"-e"}), frozenset({"-l"})),
    "pwsh": (
        frozenset({"-c", "-Command", "-command", "-EncodedCommand", "-File", "-f"}),
        frozenset(),
    ),
    "tclsh": (frozenset(), frozenset()),
}
INTERPRETERS["nodejs"] = INTERPRETERS["node"]
INTERPRETERS["powershell"] = INTERPRETERS["pwsh"]
INTERPRETERS["luajit"] = INTERPRETERS["lua"]
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})


@dataclass
class ProgramUse:
    """What a command does with its words: index → what that word is to the program, and
    whether the program reads code on its standard input."""

    code: dict[int, tuple[str, str]] = field(default_factory=dict)  # index → (what, fix)
    stdin_code: bool = False
    inner: tuple[int, int] | None = None  # sh -c SCRIPT $0 $1 …: (SCRIPT, $0) indices


def shell_words(words: list[str], at: int, out: ProgramUse) -> None:
    """``sh -c SCRIPT [$0 $1 …]``, ``sh FILE [args]``, ``sh [-s] < code``."""
    prog = words[at]
    i, script, stdin, flag = at + 1, False, False, "-c"
    while i < len(words):
        w = words[i]
        if w.startswith(EXP):
            if not script:
                rest_code(words, i, out, f"an option or the script of `{prog}`", FIX_SHELL)
                return
            break
        if w == "--" or not w.startswith(("-", "+")) or w in ("-", "+"):
            break
        letters = w[1:] if not w.startswith("--") else ""
        if w.startswith("--"):
            i += 2 if w in ("--rcfile", "--init-file") else 1
            continue
        if "c" in letters and not script:
            script, flag = True, w
        stdin = stdin or "s" in letters
        i += 2 if letters[-1:] in ("o", "O") else 1
    if i < len(words) and words[i] == "--":
        i += 1
    if script:
        if i < len(words):
            out.code[i] = (f"the script `{prog} {flag}` runs", FIX_SHELL)
            if EXP not in words[i]:
                out.inner = (i, i + 1)
    elif stdin or i >= len(words):
        out.stdin_code = True
    else:
        out.code[i] = (f"the script file `{prog}` runs", FIX_SHELL)


def rest_code(words: list[str], i: int, out: ProgramUse, what: str, fix: str) -> None:
    for j in range(i, len(words)):
        out.code[j] = (what, fix)


def interpreter_words(words: list[str], at: int, name: str, out: ProgramUse) -> None:
    prog = words[at]
    code_opts, arg_opts = INTERPRETERS[name]
    i, coded = at + 1, False
    while i < len(words):
        w = words[i]
        if w.startswith(EXP):
            if not coded:
                rest_code(words, i, out, f"an option or the code of `{prog}`", FIX_INTERP)
                return
            break
        if w == "--" or not w.startswith("-") or w == "-":
            break
        flag = w.split("=", 1)[0]
        attached = next((o for o in code_opts if len(o) == 2 and w.startswith(o)), None)
        if flag in code_opts:
            coded = True
            if "=" in w:
                out.code[i] = (f"the code `{prog} {flag}` runs", FIX_INTERP)
            elif i + 1 < len(words):
                out.code[i + 1] = (f"the code `{prog} {flag}` runs", FIX_INTERP)
                i += 1
        elif attached is not None and not w.startswith("--"):
            coded = True
            out.code[i] = (f"the code `{prog} {attached}` runs", FIX_INTERP)
        elif flag in arg_opts and "=" not in w and len(w) == 2:
            i += 1
        i += 1
    if i < len(words) and words[i] == "--":
        i += 1
    if coded:
        return
    if i >= len(words) or words[i] == "-":
        out.stdin_code = True
    else:
        out.code[i] = (f"the script file `{prog}` runs", FIX_INTERP)


def script_words(
    words: list[str],
    at: int,
    out: ProgramUse,
    what: str,
    script_opts: frozenset[str],
    arg_opts: frozenset[str],
) -> None:
    """sed and awk: the script is an option's argument, else the first operand."""
    prog = words[at]
    i, given = at + 1, False
    while i < len(words):
        w = words[i]
        if w.startswith(EXP):
            if not given:
                rest_code(words, i, out, f"an option or the {what} script of `{prog}`", FIX_DATA)
                return
            break
        if w == "--" or not w.startswith("-") or w == "-":
            break
        flag = w.split("=", 1)[0]
        short = w[:2] if not w.startswith("--") else flag
        if short in script_opts:
            given = True
            if "=" in w or (len(w) > 2 and not w.startswith("--")):
                out.code[i] = (f"the {what} script `{prog} {short}` runs", FIX_DATA)
            elif i + 1 < len(words):
                out.code[i + 1] = (f"the {what} script `{prog} {short}` runs", FIX_DATA)
                i += 1
        elif short in arg_opts and len(w) == 2:
            i += 1
        i += 1
    if i < len(words) and words[i] == "--":
        i += 1
    if not given and i < len(words):
        out.code[i] = (f"the {what} script `{prog}` runs", FIX_DATA)


def make_words(words: list[str], at: int, out: ProgramUse) -> None:
    """make splices targets and VAR=value operands into its recipes' shell text."""
    takes = frozenset(
        {
            "-C",
            "-f",
            "-I",
            "-j",
            "-l",
            "-o",
            "-W",
            "--directory",
            "--file",
            "--makefile",
            "--include-dir",
            "--jobs",
            "--load-average",
            "--old-file",
            "--what-if",
            "--assume-old",
            "--assume-new",
            "--new-file",
        }
    )
    i = at + 1
    while i < len(words):
        w = words[i]
        if EXP not in w and w.startswith("-") and w != "--" and not w.startswith("--eval"):
            i += 2 if w in takes else 1
            continue
        if w != "--":
            what = f"a target or variable `{words[at]}` splices into recipe shell text"
            out.code[i] = (what, FIX_MAKE)
        i += 1


def declare_words(words: list[str], at: int, name: str, out: ProgramUse) -> None:
    """``export NAME=value`` keeps the value data; a bare name, or ``-i``/``-n``, does not."""
    flags = "".join(w[1:] for w in words[at + 1 :] if EXP not in w and w.startswith(("-", "+")))
    evaluates = "i" in flags or "n" in flags
    for i in range(at + 1, len(words)):
        w = words[i]
        if EXP not in w and w.startswith(("-", "+")):
            continue
        what = code_variable(w.split("=", 1)[0].rstrip("+")) if is_assignment(w) else None
        if evaluates:
            out.code[i] = (f"a value `{name} -i`/`-n` reads as arithmetic or a name", FIX_NAME)
        elif what is not None:
            out.code[i] = (what, FIX_VARIABLE)
        elif not is_assignment(w):
            out.code[i] = (
                f"a variable name `{name}` takes (bash evaluates a[$(…)] in it)",
                FIX_NAME,
            )


def name_words(words: list[str], at: int, name: str, out: ProgramUse) -> None:
    """Arguments that are variable names, which bash evaluates a[$(…)] in."""
    what = "a variable name (bash evaluates a[$(…)] in it)"
    if name == "read":
        i = at + 1
        while i < len(words):
            w = words[i]
            if EXP not in w and w.startswith("-") and len(w) == 2 and w != "--":
                if w in ("-a",) and i + 1 < len(words):
                    out.code[i + 1] = (what, FIX_NAME)
                i += 2 if w in ("-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u") else 1
                continue
            if w != "--":
                out.code[i] = (what, FIX_NAME)
            i += 1
    elif name == "getopts":
        if at + 2 < len(words):
            out.code[at + 2] = (what, FIX_NAME)
    else:  # printf -v NAME, test -v NAME, [ -v NAME ]
        flag = "-v"
        for i in range(at + 1, len(words) - 1):
            if words[i] == flag and (name != "printf" or i == at + 1):
                out.code[i + 1] = (what, FIX_NAME)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


def is_assignment(word: str) -> bool:
    """``NAME=…`` with a literal name: the rest is a value, never a name."""
    return _NAME.match(word) is not None
