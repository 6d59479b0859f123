"""The shell scanner: where each placeholder of a shell command stands, and whether a value may.

Pure; it imports nothing else of omg. ``scan`` (``spots``: each placeholder's form, ``word`` or
``quoted``, or the refusal that says why no value may stand there and what to write instead)
reads the text with ``lexer`` (quotes, ``$…`` expansions, backticks, comments and heredoc
bodies, each placeholder given its ``Spot``) and holds ``frames`` (words, commands, pipelines,
command lists, quotes and heredoc bodies) while it reads; ``flow`` follows a value once a
placeholder hands it to a variable (arithmetic, a ``$name`` read as code, ``$1`` of a function
or an ``sh -c`` script); ``refusals`` are the reasons and fixes. The programs that run an
argument as code: ``words`` (which arguments of a command are code: ``sh -c``, ``eval``,
interpreters, ``sed``/``awk`` scripts, ``make``, ``ssh`` and the wrappers that start them), with
``programs`` (how each of them reads its words, and the options and environment variables
through which a program runs a command: ``git -c``, ``GIT_SSH_COMMAND``, ``PATH``; a leaf with
the expansion mark ``EXP``, so ``lexer``, ``flow`` and ``words`` stand side by side on it).
"""

__all__ = ["flow", "frames", "lexer", "programs", "refusals", "scan", "words"]
