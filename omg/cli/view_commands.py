"""The commands that look at runs: `omg status`, `omg log`, `omg replay`, `omg stats` and
`omg report` (a run's page)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal, cast

import typer

from omg.cli import complete
from omg.cli.options import (
    DEFAULT_RUNS,
    ByNode,
    Executions,
    FetchRuns,
    OutputFormat,
    RunsDir,
    exit_with,
    json_format,
)
from omg.errors import UsageError


def status(
    run_id: Annotated[
        str | None, typer.Argument(help="One run in detail.", autocompletion=complete.runs)
    ] = None,
    runs_dir: RunsDir = DEFAULT_RUNS,
    by_node: ByNode = False,
    executions: Executions = False,
    node: Annotated[
        str | None,
        typer.Option(
            "--node",
            help="One node in detail: its executions and its agent transcripts.",
            autocompletion=complete.nodes,
        ),
    ] = None,
    fetch: FetchRuns = None,
    format: OutputFormat = "text",
) -> None:
    """List runs, or show one run's ledger or one of its nodes."""
    as_json = json_format(format)
    if fetch is not None:
        from omg.cli import status as st
        from omg.cli.views import view

        print(st.fetched(fetch, run_id, asked=view(by_node, executions), as_json=as_json))
        return
    if node is not None:
        from omg.cli.nodeview import node_json, show_node

        if run_id is None:
            raise UsageError("--node needs the run: `omg status RUN_ID --node ID`")
        print((node_json if as_json else show_node)(runs_dir, run_id, node))
        return
    from omg.cli import status as st
    from omg.cli.views import view

    print(st.show(runs_dir, run_id, asked=view(by_node, executions), as_json=as_json))


def log_command(
    run_id: Annotated[
        str, typer.Argument(help="The run whose events to print.", autocompletion=complete.runs)
    ],
    runs_dir: RunsDir = DEFAULT_RUNS,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing until the running leg ends.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Each event as the JSON line recorded (for jq).")
    ] = False,
    node: Annotated[
        list[str] | None,
        typer.Option(
            "--node", help="Only this node's events (repeatable).", autocompletion=complete.nodes
        ),
    ] = None,
    event: Annotated[
        list[str] | None, typer.Option("--event", help="Only events of this kind (repeatable).")
    ] = None,
) -> None:
    """Print a run's whole event log (every chunk), verified first."""
    from omg.cli.log import show

    exit_with(
        show(runs_dir, run_id, follow=follow, as_json=as_json, nodes=node or [], events=event or [])
    )


def replay(
    run_id: Annotated[str, typer.Argument(help="The run to check.", autocompletion=complete.runs)],
    runs_dir: RunsDir = DEFAULT_RUNS,
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite state.json from the events.")
    ] = False,
) -> None:
    """Rebuild state.json from events.jsonl and compare field by field."""
    from omg.cli import status as st

    out, code = st.replay(runs_dir, run_id, write=write)
    print(out)
    exit_with(code)


def stats_command(
    fetch: FetchRuns = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="DATE", help="Runs started then or later: 2026-12-01, or 7d, 12h."
        ),
    ] = None,
    graph: Annotated[
        str | None, typer.Option("--graph", metavar="NAME", help="Only this graph's runs.")
    ] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="text | json | markdown")] = "text",
    compare: Annotated[
        tuple[str, str] | None,
        typer.Option("--compare", metavar="A B", help="Two graph versions side by side."),
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", metavar="FILE", help="Also write a page of plots.")
    ] = None,
) -> None:
    """Outcomes, loops, cost and waits over every run, per graph version."""
    from omg.cli import stats as st

    if format not in ("text", "json", "markdown"):
        raise UsageError(f"--format {format!r} is not one of text, json, markdown")
    summary = st.gather(fetch, since, graph)
    fmt = cast(Literal["text", "json", "markdown"], format)
    print(st.render(summary, fmt, compare), end="" if fmt == "markdown" else "\n")
    if html is not None:
        print(st.write_page(summary, compare, html), file=sys.stderr)


def report_command(
    run_id: Annotated[str, typer.Argument(help="The run to show.")],
    html: Annotated[Path, typer.Option("--html", metavar="FILE", help="The page to write.")],
    runs_dir: RunsDir = DEFAULT_RUNS,
    artifact: Annotated[
        str | None,
        typer.Option(
            "--artifact",
            metavar="NAME",
            help="In GitHub Actions: the artifact the page is uploaded as, named in the summary.",
        ),
    ] = None,
) -> None:
    """Write one run's page: its graph, timeline, loops and ledger, in one HTML file."""
    from omg.cli import runpage

    print(runpage.write_page(runs_dir, run_id, html, artifact))
