"""`omg lint` output: findings as text, JSON or GitHub workflow commands, and the exit code."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from omg.cli.exits import BY_REFUSAL
from omg.cli.terminal import PLAIN, Paint, Tone
from omg.errors import UsageError
from omg.github.annotations import ANNOTATION_CAP, Level, workflow_command
from omg.graph.findings import Finding, ordered
from omg.graph.lint import fails, lint_files

Format = Literal["text", "json", "github"]


def lint_paths(
    paths: list[Path], fmt: Format, strict: bool, paint: Paint = PLAIN
) -> tuple[str, int]:
    """Lint files and directories: (output, exit 0 valid / 1 invalid); UsageError on bad paths.
    ``paint`` colours the text format's severities (a terminal's)."""
    results = lint_files(paths)
    failed = any(fails(found, strict) for _, found in results)
    if fmt == "text":
        return text(results, paint), 1 if failed else 0
    render = {"json": as_json, "github": github}[fmt]
    return render(results), 1 if failed else 0


def summary(file: str, found: Sequence[Finding], paint: Paint = PLAIN) -> str:
    """``file: valid`` (with its warnings counted) or ``file: N error(s), M warning(s)``."""
    errors = sum(f.severity == "error" for f in found)
    warnings = sum(f.severity == "warning" for f in found)
    if errors:
        return f"{file}: {paint(f'{errors} error(s)', 'bad')}, {warnings} warning(s)"
    return f"{file}: {paint('valid', 'good')}" + (f", {warnings} warning(s)" if warnings else "")


_TONES: dict[str, Tone] = {"error": "bad", "warning": "wait", "info": "note"}


def text(results: Sequence[tuple[str, Sequence[Finding]]], paint: Paint = PLAIN) -> str:
    """``file:line: error: node "x": message`` lines, then ``file: valid`` or a count per file."""
    lines: list[str] = []
    for file, found in results:
        for f in ordered(found):
            where, sep, rest = f.as_text().partition(f": {f.severity}: ")
            lines.append(
                f"{where}: {paint(f.severity, _TONES[f.severity])}: {rest}" if sep else where
            )
        lines.append(summary(file, found, paint))
    return "\n".join(lines)


def as_json(results: Sequence[tuple[str, Sequence[Finding]]]) -> str:
    """A JSON list of every finding: file, line, column, node, severity, code, message, path,
    and ``via`` (the use: chain) for one spliced in from a fragment."""
    keys = ("file", "line", "column", "node", "severity", "code", "message", "path")
    rows = [
        {**{k: getattr(f, k) for k in keys}, **({"via": f.via} if f.via else {})}
        for _, found in results
        for f in ordered(found)
    ]
    return json.dumps(rows, indent=2, ensure_ascii=False)


def github(results: Sequence[tuple[str, Sequence[Finding]]]) -> str:
    """``::error file=…,line=…,title=…::message`` annotations, 10 errors + 10 warnings a file."""
    lines: list[str] = []
    for file, found in results:
        shown = {"error": 0, "warning": 0}
        hidden = {"error": 0, "warning": 0}
        for f in ordered(found):
            if f.severity in shown:
                if shown[f.severity] == ANNOTATION_CAP:
                    hidden[f.severity] += 1
                    continue
                shown[f.severity] += 1
            lines.append(_command(f))
        if hidden["error"] or hidden["warning"]:
            more = (
                f"{hidden['error']} more error(s) and {hidden['warning']} more warning(s) "
                f"not shown; run `omg lint {file}` to see them all"
            )
            lines.append(workflow_command("notice", more, {"file": file}))
        lines.append(summary(file, found))
    return "\n".join(lines)


def _command(f: Finding) -> str:
    level: Level = {"error": "error", "warning": "warning", "info": "notice"}[f.severity]  # type: ignore[assignment]
    props: dict[str, str | int] = {"file": f.file}
    if f.line is not None:
        props["line"] = f.line
        if f.column is not None:
            props["col"] = f.column
    props["title"] = f"omg lint {f.code}" + (f' (node "{f.node}")' if f.node else "")
    return workflow_command(level, f.message + f.cited(), props)


def main(argv: list[str] | None = None, prog: str = "python -m omg.lint") -> None:
    """`omg lint` / `python -m omg.lint` without typer: the fast path of a pre-commit hook."""
    parser = argparse.ArgumentParser(prog=prog, description="Check graph files.")
    parser.add_argument("paths", nargs="+", type=Path, help="graph files or directories")
    parser.add_argument("--format", "-f", default="text", help="text | json | github")
    parser.add_argument("--strict", action="store_true", help="fail on advisories too")
    args = parser.parse_args(argv)
    try:
        if args.format not in ("text", "json", "github"):
            raise UsageError(f"--format {args.format!r} is not one of text, json, github")
        out, code = lint_paths(args.paths, args.format, args.strict, Paint.to(sys.stdout))
    except UsageError as exc:
        print(f"omg: {exc}", file=sys.stderr)
        sys.exit(BY_REFUSAL[exc.kind])
    if out:
        print(out)
    sys.exit(code)
