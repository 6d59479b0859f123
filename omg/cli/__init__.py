"""The command line: the only code that prints or picks exit codes.

One level deep
(``tests/arch/test_cli_commands.py``): the typer ``app`` (every command in ``omg --help``'s
order, and the one error handler) and its command groups, which hold each command's options and
hand it to its module — ``graph_commands`` (lint, init, graph, stub-model), ``run_commands``
(run, resume, clean), ``view_commands`` (status, log, replay, stats, report), ``job_commands``
(leg, publish, plan, prune: ``omg leg``'s and ``omg publish``'s options, handed to ``jobs``,
which hands the job to ``ci/``, prints its words and makes its outcome the exit code); the
options several commands share, declared once as
``Annotated`` types
(``options``); then one module per command, which import no other command module and share only
the leaf helpers ``exits``, ``ledger``, ``views`` (which ledger was asked for: per execution, per
node, or by the run's length), ``options``, ``outcome`` (how a leg run here ended, told
to a person), ``next``, ``progress``, ``rehearsal`` (the stand-in for a ``--rehearse`` block),
``machine`` (the ``--format json`` forms, ``schemas/status.schema.json``: ``omg status``'s
documents — a listing, one run with its next step, nodes and executions, one node — and the
outcome line ``omg run``/``omg resume`` end stdout with, a refusal's too; ``schema: 1``, fields
only ever added within it), ``complete`` (shell completion, ``--install-completion``: run ids
from the runs directory's names, a run's node and gate ids from its ``state.json``, read
unverified and never raising — a Tab must answer at once and never break the shell),
``guard`` (the one error handler every command runs under), ``fastrun`` (`omg run`'s and `omg
resume`'s plain command lines read without typer, the rest left to it), ``fastleg`` (`omg
leg`'s plain command lines and ``OMG_*`` variables, the same way), ``fastargs`` (what
the two share: the one loop over a plain command line's options, the signal to leave it to
typer, a plain number, a path as typer takes it, the runs directory's default), ``inputs`` (``-i``,
``OMG_INPUTS`` and the UTF-8 check, typer-free), ``terminal`` (what a stream may be sent:
colour only to a terminal while ``NO_COLOR`` is unset or empty, a redrawn line only to a
terminal that is not ``TERM=dumb``, never a control character from a node's output — shown
as ``\\xNN``), ``version`` (``omg --version``: the version and, from PEP 610's
``direct_url.json``, the commit a git install came from — the pin ``omg init`` writes).
Commands: ``log`` (``omg log``: the whole event log as one stream, filtered, followed),
``stub_model`` (``omg stub-model``), ``jobs`` (``omg leg``'s and ``omg publish``'s bodies,
typer-free), ``nodeview`` (``status --node``), ``graphview`` (``omg
graph``: the flowchart, grouped by depth with why on stderr when Mermaid's defaults would refuse
it; ``--full`` for every edge), ``scrub`` (the start-up re-exec without secrets in the
environment block; non-dumpable), ``plan`` (``omg plan --matrix``), ``runs``
(run/resume/clean), ``init`` (``omg init``: the workflows and a starter graph from
``omg/templates/``, pinned, never over a differing file nor through a link: every path planned
before any is written, each file made in a ``mkdtemp`` directory inside the target and linked
into place), ``next`` (the one "what next" table), ``prune`` (``omg prune``: judges each run
from its record, lease and notes, asks GitHub whether each pull request with a spend book is
open, prints and removes), ``status`` (status/replay; ``--fetch REMOTE``: the remote's run
branches fetched into ``refs/remotes/`` and read from there, nothing else local written),
``ledger``, ``lint`` (formats; ``python -m omg.lint``), ``progress``, ``exits``, ``stats``
(``omg stats``: the run branches, local or ``--fetch REMOTE``'s, summarised as text, JSON or
Markdown, ``--compare``, ``--html``), ``runpage`` (``omg report RUN --html FILE``: one run's
page; ``--artifact NAME`` names it in the step summary)
"""

from __future__ import annotations

import os
import sys

__all__ = ["HELP", "fast"]

#: `omg --help`, as typer renders it (tests/cli/test_fast.py proves the two are the same), so
#: the commonest look at the tool does not wait ~100 ms for typer to build every command.
HELP = """\
Usage: omg [OPTIONS] COMMAND [ARGS]...

  Run graphs of agent sessions and shell checks inside git, one leg at a time.

Options:
  --version             Print omg's version (and the commit it was installed
                        from) and exit.
  --install-completion  Install completion for the current shell.
  --show-completion     Show completion for the current shell, to copy it or
                        customize the installation.
  --help                Show this message and exit.

Commands:
  lint        Check graph files: schema, semantic rules and advisories.
  init        Write the omg workflows and a starter graph; never over a...
  graph       Print the graph as a Mermaid flowchart.
  run         Start a run: its first leg.
  resume      Run the next leg of a run.
  status      List runs, or show one run's ledger or one of its nodes.
  log         Print a run's whole event log (every chunk), verified first.
  replay      Rebuild state.json from events.jsonl and compare field by...
  clean       Remove a run's worktrees; never a branch holding unpushed...
  prune       Remove settled runs' branches, lanes and notes past an age,...
  leg         One GitHub Actions job: read the event, run one leg, report.
  publish     The publish job of a leg split in two: plan the trigger,...
  plan        Print the nodes that may run now on machines of their own,...
  stub-model  Serve a scripted stand-in model on loopback (Messages API:...
  stats       Outcomes, loops, cost and waits over every run, per graph...
  report      Write one run's page: its graph, timeline, loops and...
"""


def fast() -> bool:
    """What `omg --help`, `omg --version`, `omg lint` (a pre-commit hook), a plain `omg run`
    or `omg resume` and a plain `omg leg` (every GitHub job) do without importing typer; False
    when the typer app must answer (the entry point, `omg/__main__.py`, then hands it the
    command)."""
    # A terminal whose encoding cannot show ✓ or — gets \u2713, never exit 70.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    args = sys.argv[1:]
    if args == ["--help"]:
        sys.stdout.write(HELP)
        return True
    if args == ["--version"]:
        from omg.cli.version import describe

        sys.stdout.write(describe() + "\n")
        return True
    if args[:1] == ["lint"] and "--help" not in args and "-h" not in args:
        from omg.cli.lint import main as lint

        lint(args[1:], prog="omg lint")
    from omg.cli.scrub import scrub

    scrub(args)  # a command that may start children re-executes without its secrets first
    if args[:1] in (["run"], ["resume"]):
        from omg.cli import fastrun

        given = fastrun.parse(args, os.environ)
        if given is not None:
            fastrun.run(given)
    if args[:1] == ["leg"]:
        from omg.cli import fastleg

        job = fastleg.parse(args, os.environ)
        if job is not None:
            fastleg.run(job)
    return False
