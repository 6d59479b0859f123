"""Output schema files: an agent node's ``output_schema: path/to/schema.json`` read from the
repository (the disk, or a commit's tree) and put in the graph's data as the schema itself, so
a run's snapshot holds it and no later leg reads the file again."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omg import strictjson
from omg.graph.files import Files
from omg.graph.findings import Finding
from omg.graph.positions import Positions, json_path

#: The most bytes an output schema file may hold.
MAX_SCHEMA_BYTES = 64 * 1024


def read_schemas(
    data: Any, positions: Positions | None, file: str, files: Files
) -> tuple[Any, list[Finding]]:
    """``data`` with every ``output_schema`` that names a file replaced by the file's JSON, and
    a finding for each file that cannot be used (unread ones stay paths: the schema refuses
    nothing more, the validator names them)."""
    nodes = data.get("nodes") if isinstance(data, Mapping) else None
    if not isinstance(nodes, list) or not any(
        isinstance(n, Mapping) and isinstance(n.get("output_schema"), str) for n in nodes
    ):
        return data, []
    out = copy.copy(data)
    out["nodes"] = list(nodes)
    root = files.root(Path(file))
    found: list[Finding] = []
    for i, node in enumerate(nodes):
        given = node.get("output_schema") if isinstance(node, Mapping) else None
        if not isinstance(given, str):
            continue
        where = ("nodes", i, "output_schema")
        schema, why = _read(root, given, files)
        if why:
            line, col = positions.at(where) if positions is not None else (None, None)
            found.append(
                Finding(
                    file, line, "error", "output-schema-file",
                    f"output_schema {given!r}: {why}", str(node.get("id") or "") or None,
                    col, json_path(where),
                )
            )  # fmt: skip
            continue
        out["nodes"][i] = {**node, "output_schema": schema}
    return out, found


def _read(root: Path, given: str, files: Files) -> tuple[Any, str]:
    rel = Path(given)
    if rel.is_absolute() or ".." in rel.parts:
        return None, "give a path inside the repository, relative to its root"
    path = root / rel
    kind = files.kind(path, path.parent, root)
    if kind != "file":
        return None, {
            "missing": f"no such file under the repository root ({root}); fix the path",
        }.get(kind, "the path goes through a link; name the file itself")
    try:
        size = files.size(path)
        raw = b"" if size > MAX_SCHEMA_BYTES else files.read(path, MAX_SCHEMA_BYTES)
    except OSError as exc:
        return None, f"cannot read the file: {exc.strerror or exc}"
    if max(size, len(raw)) > MAX_SCHEMA_BYTES:
        return None, f"the file is over {MAX_SCHEMA_BYTES // 1024} KiB; a reply's schema is small"
    try:
        value = strictjson.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"the file is not JSON ({exc}); write the schema as a JSON object"
    if not isinstance(value, dict):
        return None, "the file holds no JSON object; a JSON Schema is an object"
    return value, ""
