"""Code options: the options and environment variables through which a program runs a command.

``git -c core.pager=…``, ``tar --to-command=…``, ``GIT_SSH_COMMAND=…``, ``PATH=…``: a value
there chooses what runs. And a value at the start of an argument of these programs may be taken
for such an option (``--upload-pack=…``) unless ``--`` comes first.
"""

from __future__ import annotations

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
