"""Lint output: findings rendered as text, JSON or GitHub workflow commands, and the exit code."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from omg.graph.findings import Finding

Format = Literal["text", "json", "github"]
#: GitHub shows at most 10 error and 10 warning annotations per step; more are dropped.
GITHUB_CAP = 10
_RANK = {"error": 0, "warning": 1, "info": 2}


def lint_paths(paths: list[Path], fmt: Format, strict: bool) -> tuple[str, int]:
    """Lint files and directories: (output, exit 0 valid / 1 invalid); UsageError on bad paths."""
    from omg.graph.lint import collect
    from omg.graph.load import check_file

    results = [(str(p), check_file(p)[1]) for p in collect(paths)]
    failed = any(fails(found, strict) for _, found in results)
    render = {"text": text, "json": as_json, "github": github}[fmt]
    return render(results), 1 if failed else 0


def fails(found: Sequence[Finding], strict: bool) -> bool:
    """An error fails a file; under --strict a warning does too. Info never does."""
    return any(f.severity == "error" or (strict and f.severity == "warning") for f in found)


def ordered(found: Sequence[Finding]) -> list[Finding]:
    return sorted(found, key=lambda f: (f.severity == "info", f.line or 0, _RANK[f.severity]))


def summary(file: str, found: Sequence[Finding]) -> str:
    """``file: valid`` (with its warnings counted) or ``file: N error(s), M warning(s)``."""
    errors = sum(f.severity == "error" for f in found)
    warnings = sum(f.severity == "warning" for f in found)
    if errors:
        return f"{file}: {errors} error(s), {warnings} warning(s)"
    return f"{file}: valid" + (f", {warnings} warning(s)" if warnings else "")


def text(results: Sequence[tuple[str, Sequence[Finding]]]) -> str:
    """``file:line: error: node "x": message`` lines, then ``file: valid`` or a count per file."""
    lines: list[str] = []
    for file, found in results:
        lines.extend(f.as_text() for f in ordered(found))
        lines.append(summary(file, found))
    return "\n".join(lines)


def as_json(results: Sequence[tuple[str, Sequence[Finding]]]) -> str:
    """A JSON list of every finding: file, line, column, node, severity, code, message, path."""
    keys = ("file", "line", "column", "node", "severity", "code", "message", "path")
    rows = [{k: getattr(f, k) for k in keys} for _, found in results for f in ordered(found)]
    return json.dumps(rows, indent=2, ensure_ascii=False)


def escape_data(value: str) -> str:
    """GitHub workflow-command message escaping."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    """GitHub workflow-command property escaping (data escaping plus ``:`` and ``,``)."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(results: Sequence[tuple[str, Sequence[Finding]]]) -> str:
    """``::error file=…,line=…,title=…::message`` annotations, 10 errors + 10 warnings a file."""
    lines: list[str] = []
    for file, found in results:
        shown = {"error": 0, "warning": 0}
        hidden = {"error": 0, "warning": 0}
        for f in ordered(found):
            if f.severity in shown:
                if shown[f.severity] == GITHUB_CAP:
                    hidden[f.severity] += 1
                    continue
                shown[f.severity] += 1
            lines.append(_command(f))
        if hidden["error"] or hidden["warning"]:
            more = (
                f"{hidden['error']} more error(s) and {hidden['warning']} more warning(s) "
                f"not shown; run `omg lint {file}` to see them all"
            )
            lines.append(f"::notice file={escape_property(file)}::{escape_data(more)}")
        lines.append(summary(file, found))
    return "\n".join(lines)


def _command(f: Finding) -> str:
    kind = {"error": "error", "warning": "warning", "info": "notice"}[f.severity]
    props = [f"file={escape_property(f.file)}"]
    if f.line is not None:
        props.append(f"line={f.line}")
        if f.column is not None:
            props.append(f"col={f.column}")
    title = f"omg lint {f.code}" + (f' (node "{f.node}")' if f.node else "")
    props.append(f"title={escape_property(title)}")
    return f"::{kind} {','.join(props)}::{escape_data(f.message)}"
