"""Lint inputs: which files `omg lint PATH...` checks, and every finding of each."""

from __future__ import annotations

from pathlib import Path

from omg.errors import UsageError
from omg.graph.findings import Finding
from omg.graph.load import check_file
from omg.graph.yamlpos import json_path, parse

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"

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

    A stub-model script (a mapping with ``rules:`` and no ``nodes:``, as in
    graphs/rehearsals/) is checked against its own schema instead of the graph's.
    """
    return [
        (str(p), script_findings(p) if is_script(p) else check_file(p)[1]) for p in collect(paths)
    ]


def is_script(path: Path) -> bool:
    try:
        parsed = parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False
    data = parsed.data
    return isinstance(data, dict) and "rules" in data and "nodes" not in data


def script_findings(path: Path) -> list[Finding]:
    """Every way a stub-model script breaks schemas/stub-model.schema.json, with its line."""
    import json

    from omg.fastschema import compile_schema

    parsed = parse(path.read_text(encoding="utf-8"))
    schema = json.loads((SCHEMA_DIR / "stub-model.schema.json").read_text(encoding="utf-8"))
    if compile_schema(schema)(parsed.data):  # a sound script never imports jsonschema
        return []
    from jsonschema import Draft202012Validator

    out = []
    for err in sorted(Draft202012Validator(schema).iter_errors(parsed.data), key=str):
        where = tuple(err.absolute_path)
        line, column = parsed.positions.at(where)
        shown = json_path(where)
        out.append(
            Finding(str(path), line, "error", "stub-model-schema", f"{shown}: {err.message}",
                    column=column, path=shown)
        )  # fmt: skip
    return out


def fails(found: list[Finding], strict: bool) -> bool:
    """An error fails a file; under --strict a warning does too. Info never does."""
    return any(f.severity == "error" or (strict and f.severity == "warning") for f in found)
