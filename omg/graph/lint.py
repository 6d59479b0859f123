"""Lint inputs: which files `omg lint PATH...` checks, and every finding of each."""

from __future__ import annotations

import re
from pathlib import Path

from omg.errors import UsageError
from omg.graph.findings import Finding
from omg.graph.limits import MAX_GRAPH_FILE_BYTES
from omg.graph.load import check_file
from omg.graph.scriptcheck import script_findings
from omg.graph.workflows import check as check_workflow
from omg.graph.workflows import is_workflow
from omg.graph.yamlpos import Parsed, parse

SUFFIXES = (".yaml", ".yml")


def collect(paths: list[Path]) -> list[Path]:
    """Files as given, directories searched recursively for *.yaml / *.yml (skipping dot dirs).

    Raises UsageError for a path that does not exist or when no YAML file is found at all.
    """
    if not paths:
        raise UsageError("omg lint needs at least one graph file or directory")
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in SUFFIXES
                and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts[:-1])
            )
            if not found:
                raise UsageError(f"{path}: no *.yaml or *.yml files in this directory")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise UsageError(f"{path}: no such file or directory")
    return list(dict.fromkeys(out))


def lint_files(paths: list[Path]) -> list[tuple[str, list[Finding]]]:
    """(file, its findings) for every graph file ``paths`` name; UsageError on bad paths.

    A stub-model script (top-level ``rules:`` and no ``nodes:``, as in graphs/rehearsals/) is
    checked against its own schema instead of the graph's, and a GitHub workflow (top-level
    ``jobs:``) for the dispatches its legs make (``graph/workflows``).
    """
    out = []
    for p in collect(paths):
        text = _text(p)
        if text is not None and is_workflow(text):
            out.append((str(p), workflow_findings(p, text)))
        elif text is not None and is_script(text):
            out.append((str(p), script_findings(parse(text), str(p))))
        elif text is not None and is_fragment(text):
            from omg.graph.fragments.body import lint_fragment

            out.append((str(p), lint_fragment(p)))
        else:
            out.append((str(p), check_file(p)[1]))
    return out


_TOP_KEY = re.compile(r"^(rules|nodes)\s*:", re.MULTILINE)


def is_script(text: str) -> bool:
    """A stub-model script, told from a graph by its top-level keys without parsing it."""
    keys = set(_TOP_KEY.findall(text))
    return keys == {"rules"}


_FRAGMENT_KEY = re.compile(r"^fragment\s*:", re.MULTILINE)


def is_fragment(text: str) -> bool:
    """A fragment file (top-level ``fragment:``), told from a graph without parsing it."""
    return _FRAGMENT_KEY.search(text) is not None and not is_script(text)


def workflow_findings(path: Path, text: str) -> list[Finding]:
    """The workflow at ``path`` checked, the workflows it dispatches to read beside it."""

    def sibling(name: str) -> Parsed | None:
        other = path.parent / name
        found = _text(other) if "/" not in name and other.is_file() else None
        return parse(found) if found is not None else None

    return check_workflow(parse(text), str(path), path.name, sibling)


def _text(path: Path) -> str | None:
    """The file's text, to tell its kind; None past a graph file's size (never read whole)."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_GRAPH_FILE_BYTES + 1)
        return None if len(raw) > MAX_GRAPH_FILE_BYTES else raw.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # check_file says what is wrong with it


def fails(found: list[Finding], strict: bool) -> bool:
    """An error fails a file; under --strict a warning does too. Info never does."""
    return any(f.severity == "error" or (strict and f.severity == "warning") for f in found)
