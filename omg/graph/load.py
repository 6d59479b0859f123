"""The graph loader: file → YAML → schema → model → semantic rules → advisories, all at once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from omg.errors import GraphError, InputError
from omg.graph.build import graph_from_data
from omg.graph.files import DISK, Files
from omg.graph.findings import Finding, show
from omg.graph.limits import (
    MAX_GRAPH_FILE_BYTES,
    MAX_INPUT_BYTES,
    file_too_large,
    graph_name,
    snapshot_bytes,
    too_large,
)
from omg.graph.model import FragmentUse, Graph
from omg.graph.positions import Positions, json_path
from omg.graphdata import GraphData

_WITH = re.compile(r"\{\{\s*with\b")


def has_uses(data: Any) -> bool:
    """Whether a node of ``data`` names a fragment (a graph without one is left as it is)."""
    nodes = data.get("nodes") if isinstance(data, Mapping) else None
    return isinstance(nodes, list) and any(isinstance(n, Mapping) and "use" in n for n in nodes)


def _writes_with(data: Any) -> bool:
    nodes = data.get("nodes") if isinstance(data, Mapping) else None
    return (
        isinstance(nodes, list)
        and any(
            isinstance(n, Mapping) and ("with" in n or "/" in str(n.get("id", ""))) for n in nodes
        )
    ) or (isinstance(data, Mapping) and "resolved_from" in data)


def check_file(
    path: Path, files: Files = DISK, *, advisories: bool = True
) -> tuple[Graph | None, list[Finding]]:
    """Every problem of one graph file, and the graph when there is no error. Never raises.
    ``files``: where it and its fragments are read (the disk, or a commit's tree); without
    ``advisories``, the errors alone (what a run needs)."""
    file = str(path)
    try:
        size = files.size(path)
        raw = b"" if size > MAX_GRAPH_FILE_BYTES else files.read(path, MAX_GRAPH_FILE_BYTES)
        size = max(size, len(raw))
    except OSError as exc:
        why = exc.strerror or str(exc)
        return None, [Finding(file, None, "error", "unreadable", f"cannot read the file: {why}")]
    if size > MAX_GRAPH_FILE_BYTES:
        return None, [file_too_large(file, size)]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, [
            Finding(
                file,
                line,
                "error",
                "not-utf8",
                f"byte {exc.start} is not UTF-8 text — save the file as UTF-8",
            )
        ]
    from omg.graph.yamlpos import parse  # a file's text: a run's snapshot needs no parser

    parsed = parse(text)
    found = [
        Finding(file, p.line, "error", p.code, p.message, column=p.column, path=json_path(p.path))
        for p in parsed.problems
    ]
    if any(p.code not in ("duplicate-key", "yaml-key") for p in parsed.problems):
        return None, found  # not YAML at all: nothing further can be judged
    data, positions = parsed.data, parsed.positions
    big = too_large(data, file, positions)
    if big is not None:
        return None, [*found, big]  # before any splice, regex or shell scan pays for its size
    named = graph_name(data, file, positions)
    if named is not None:
        found.append(named)
    uses: tuple[FragmentUse, ...] = ()
    if has_uses(data) or _writes_with(data) or _WITH.search(text):
        from omg.graph.fragments.splice import splice

        spliced = splice(data, positions, file, files)
        found += spliced.findings
        if any(f.severity == "error" for f in spliced.findings):
            return None, sorted(found, key=_order)
        data, positions, uses = spliced.data, spliced.positions, tuple(spliced.uses)
    from omg.graph.schemafiles import read_schemas

    data, unread = read_schemas(data, positions, file, files)
    if unread:
        return None, sorted([*found, *unread], key=_order)
    graph, rest = check_data(data, file, positions, advisories=advisories)
    if graph is not None and uses:
        graph = replace(graph, uses=uses)
        rest = [*rest, *(Finding(u.file, u.line, "info", "fragment-use", u.disclosure())
                         for u in uses)]  # fmt: skip
    if any(f.severity == "error" for f in found):
        graph = None
        rest = [f for f in rest if f.severity == "error"]
    return graph, sorted([*found, *rest], key=_order)


def check_data(
    data: Any, source: str, positions: Positions | None = None, *, advisories: bool = True
) -> tuple[Graph | None, list[Finding]]:
    """Schema, model and semantic rules over parsed data; advisories only for a valid graph."""
    if data is None:
        return None, [
            Finding(
                source,
                1,
                "error",
                "empty",
                "the file is empty — a graph needs at least name: and nodes:",
            )
        ]
    if not isinstance(data, Mapping):
        return None, [
            Finding(
                source,
                1,
                "error",
                "not-a-mapping",
                f"the file holds {show(data)}, "
                "not a mapping — a graph is a mapping with name: and nodes:",
            )
        ]
    big = too_large(data, source, positions)
    if big is not None:
        return None, [big]
    from omg.graph.schema import schema_findings

    errors = schema_findings(data, source, positions)
    if errors:
        return None, errors
    from omg.graph.validate import validate

    graph = graph_from_data(cast(GraphData, data))  # the schema just held it to this shape
    errors = validate(graph, source, positions)
    if errors:
        return None, errors
    if not advisories:
        return graph, []
    from omg.graph.advise import advise

    return graph, advise(graph, source, positions)


def load_graph(path: Path) -> Graph:
    """The valid graph in ``path``, or GraphError listing every error (advisories are dropped)."""
    graph, findings = check_file(path, advisories=False)
    if graph is None:
        raise GraphError(_report(findings, f"in {path}; fix them and run `omg lint {path}`"))
    return graph


def graph_from_snapshot(data: GraphData, source: str) -> Graph:
    """The graph a run snapshotted in its state.json, checked by the same schema and rules."""
    graph, findings = check_data(data, source, advisories=False)
    if graph is None:
        raise GraphError(
            _report(
                findings,
                f"in the graph this run snapshotted from {source}; "
                "the run cannot continue with it — start a new run from a "
                "fixed graph file",
            )
        )
    return graph


def resolve_inputs(graph: Graph, given: Mapping[str, str]) -> dict[str, str]:
    """Declared defaults applied; an undeclared or missing required input is refused."""
    declared = {i.name: i for i in graph.inputs}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        names = ", ".join(sorted(declared)) or "none"
        raise InputError(
            f"input(s) {', '.join(unknown)} are not declared by graph {graph.name!r} "
            f"(declared: {names}); fix the -i name or add it to the graph's inputs"
        )
    out: dict[str, str] = {}
    missing = []
    for name, spec in declared.items():
        if name in given:
            out[name] = given[name]
        elif spec.default is not None:
            out[name] = spec.default
        elif spec.required or not isinstance(graph.data.get("inputs"), Mapping):
            missing.append(name)
        else:
            out[name] = ""
    if missing:
        raise InputError(
            f"graph {graph.name!r} needs input(s) {', '.join(missing)}; pass them with "
            + " ".join(f"-i {m}=VALUE" for m in missing)
        )
    for name, value in out.items():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InputError(
                f"input {name!r} is not UTF-8 text (character {exc.start} is a stray byte); "
                "pass text, or the path of a file holding the bytes"
            ) from None
    size = snapshot_bytes(out)
    if size > MAX_INPUT_BYTES:
        raise InputError(
            f"the inputs take {size:,} bytes, more than the {MAX_INPUT_BYTES:,} a run records "
            "them in (its first event is one line of events.jsonl); pass long text as the "
            "path of a file the nodes read"
        )
    return out


def _report(findings: list[Finding], where: str) -> str:
    errors = [f for f in findings if f.severity == "error"]
    lines = [f.as_text() for f in errors]
    lines.append(f"{len(errors)} error(s) {where}")
    return "\n".join(lines)


def _order(f: Finding) -> tuple[int, int]:
    return (f.line or 0, f.column or 0)
