"""The command line: the only code that prints or picks exit codes."""

from __future__ import annotations

import sys

__all__ = ["main"]

#: `omg --help`, as typer renders it (tests/test_cli_fast.py proves the two are the same), so
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
  publish     The publish job of a leg split in two: verify the run job's...
  plan        Print the nodes that may run now on machines of their own,...
  stub-model  Serve a scripted stand-in model on loopback (Messages API:...
  stats       Outcomes, loops, cost and waits over every run, per graph...
  report      Write one run's page: its graph, timeline, loops and...
"""


def main() -> None:
    """The `omg` console script. `omg --help`, `omg --version` and `omg lint` (a pre-commit
    hook) take fast paths that never import typer; everything else goes through the typer app."""
    # A terminal whose encoding cannot show ✓ or — gets \u2713, never exit 70.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    args = sys.argv[1:]
    if args == ["--help"]:
        sys.stdout.write(HELP)
        return
    if args == ["--version"]:
        from omg.cli.version import describe

        sys.stdout.write(describe() + "\n")
        return
    if args[:1] == ["lint"] and "--help" not in args and "-h" not in args:
        from omg.cli.lint import main as lint

        lint(args[1:], prog="omg lint")
    from omg.cli.scrub import scrub

    scrub(args)  # a command that may start children re-executes without its secrets first
    from omg.cli.app import main as run

    run()
