"""Lint inputs: which files `omg lint PATH...` checks, and every finding of each."""

from __future__ import annotations

from pathlib import Path

from omg.errors import UsageError
from omg.graph.findings import Finding
from omg.graph.load import check_file

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
    """(file, its findings) for every graph file ``paths`` name; UsageError on bad paths."""
    return [(str(p), check_file(p)[1]) for p in collect(paths)]


def fails(found: list[Finding], strict: bool) -> bool:
    """An error fails a file; under --strict a warning does too. Info never does."""
    return any(f.severity == "error" or (strict and f.severity == "warning") for f in found)
