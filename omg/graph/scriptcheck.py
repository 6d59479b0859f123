"""A stub-model script's check: every way a parsed script breaks
schemas/stub-model.schema.json, each a finding at its line."""

from __future__ import annotations

from pathlib import Path

from omg.graph.findings import Finding
from omg.graph.positions import json_path
from omg.graph.yamlpos import Parsed

STUB_MODEL_SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "stub-model.schema.json"


def script_findings(parsed: Parsed, file: str) -> list[Finding]:
    """Every way a parsed stub-model script breaks schemas/stub-model.schema.json, each at its
    line; a sound script is answered by the compiled check and never imports jsonschema."""
    import json

    from omg.fastschema import compile_schema

    out = [
        Finding(file, p.line, "error", "yaml", f"{p.message}; fix the YAML")
        for p in parsed.problems
    ]
    if out:
        return out
    schema = json.loads(STUB_MODEL_SCHEMA.read_text(encoding="utf-8"))
    if compile_schema(schema)(parsed.data):
        return []
    from jsonschema import Draft202012Validator

    errors = Draft202012Validator(schema).iter_errors(parsed.data)
    for err in sorted(errors, key=lambda e: list(map(str, e.absolute_path))):
        where = tuple(err.absolute_path)
        line, column = parsed.positions.at(where)
        shown = json_path(where)
        said = shown[1:].lstrip(".") or "the script"  # rules[0].turns[0], as graph fields read
        out.append(
            Finding(file, line, "error", "stub-model-schema", f"{said}: {err.message}",
                    column=column, path=shown)
        )  # fmt: skip
    return out
