"""The commands on graph files and the repository: `omg lint`, `omg init`, `omg graph` and
`omg stub-model` (their modules imported when they run, so `omg lint` starts fast)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Literal, cast

import typer

from omg.cli.options import exit_with
from omg.errors import UsageError


def lint(
    paths: Annotated[list[Path], typer.Argument(help="Graph files or directories of *.yaml.")],
    format: Annotated[str, typer.Option("--format", "-f", help="text | json | github")] = "text",
    strict: Annotated[bool, typer.Option("--strict", help="Fail on advisories too.")] = False,
) -> None:
    """Check graph files: schema, semantic rules and advisories."""
    from omg.cli.lint import lint_paths
    from omg.cli.terminal import Paint

    if format not in ("text", "json", "github"):
        raise UsageError(f"--format {format!r} is not one of text, json, github")
    fmt = cast(Literal["text", "json", "github"], format)
    out, code = lint_paths(paths, fmt, strict, Paint.to(sys.stdout))
    if out:
        print(out)
    exit_with(code)


def init_command(
    path: Annotated[Path, typer.Argument(help="The repository (default: here).")] = Path("."),
    uses: Annotated[
        str | None,
        typer.Option(
            "--uses",
            metavar="OWNER/REPO@COMMIT",
            help="The omg action to pin (default: the commit omg was installed from).",
        ),
    ] = None,
    show: Annotated[
        str | None,
        typer.Option(
            "--show", metavar="FILE", help="Print what omg would write at FILE, to compare."
        ),
    ] = None,
) -> None:
    """Write the omg workflows and a starter graph; never over a file that differs."""
    from omg.cli.init import init

    out, code = init(path, uses, show)
    print(out)
    exit_with(code)


def graph(
    path: Annotated[Path, typer.Argument(help="A graph file.")],
    full: Annotated[
        bool, typer.Option("--full", help="Every node and edge, past what Mermaid draws.")
    ] = False,
) -> None:
    """Print the graph as a Mermaid flowchart."""
    from omg.cli.graphview import show

    show(path, full=full)


def stub_model(
    script: Annotated[Path, typer.Argument(help="The script: rules saying what to answer.")],
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="0: any free port.")] = 0,
) -> None:
    """Serve a scripted stand-in model on loopback (Messages API: claude; Responses: codex)."""
    from omg.cli import stub_model

    exit_with(stub_model.serve(script, port))
