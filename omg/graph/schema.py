"""The schema check: graph data against graph.schema.json, each violation told as its fix."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from omg.fastschema import Check, compile_schema
from omg.graph.findings import Finding, show, unknown_key
from omg.graph.positions import Path as DataPath
from omg.graph.positions import Positions, json_path

SCHEMA_FILE = Path(__file__).parents[1] / "schemas" / "graph.schema.json"
KINDS = "a node is exactly one of agent (prompt:), shell (run:) or gate (type: gate)"

Issue = tuple[DataPath, str, str]  # (data path, code, message)


#: What only a graph as written holds: a fragment's use and its bindings, which the splice
#: replaces before the schema judges the graph (the published schema's ``useNode`` branch).
AUTHORED = ("use", "with")


@cache
def published_schema() -> dict[str, Any]:
    """schemas/graph.schema.json as shipped: a graph as written, `use:` and `with:` included."""
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


@cache
def graph_schema() -> dict[str, Any]:
    """The schema a resolved graph (a spliced file, a run's snapshot) is held to: the published
    one without what only a graph as written holds — derived, so one file is the source."""
    schema = copy.deepcopy(published_schema())
    defs = schema["$defs"]
    del defs["useNode"]
    defs["node"]["oneOf"] = [b for b in defs["node"]["oneOf"] if b != {"$ref": "#/$defs/useNode"}]
    for name in ("node", "agentNode", "shellNode", "gateNode"):
        for key in AUTHORED:
            defs[name]["properties"].pop(key, None)
    return schema


@cache
def _validator() -> Any:
    # Imported here: jsonschema is the slowest import of `omg lint`, and only this needs it.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_inlined(graph_schema(), graph_schema()["$defs"]))


def _inlined(node: Any, defs: Mapping[str, Any]) -> Any:
    """The schema with every local ``$ref`` replaced by its definition (the definition's own
    title and description win), so validating 2,000 nodes does not resolve 14,000 refs."""
    if isinstance(node, list):
        return [_inlined(sub, defs) for sub in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: _inlined(v, defs) for k, v in node.items() if k not in ("$ref", "$defs")}
    if "$ref" in node:
        out.update(_inlined(defs[node["$ref"].rsplit("/", 1)[-1]], defs))
    return out


@cache
def _is_valid() -> Check:
    return compile_schema(graph_schema())


@cache
def node_check() -> Check:
    """The compiled check of one resolved node (a fragment body's, judged before any splice)."""
    schema = graph_schema()
    return compile_schema(schema["$defs"]["node"], schema["$defs"])


def schema_findings(data: Any, file: str, positions: Positions | None) -> list[Finding]:
    """Every schema violation of ``data``, translated, located, deduplicated, in file order.

    A valid file is answered by the compiled check alone; jsonschema explains an invalid one.
    """
    if _is_valid()(data):
        return []
    seen: set[tuple[DataPath, str]] = set()
    out: list[Finding] = []
    for err in _validator().iter_errors(data):
        for path, code, message in _translate(err, data, ""):
            if (path, message) in seen:
                continue
            seen.add((path, message))
            line, col = positions.at(path) if positions else (None, None)
            where, via = positions.origin(path, file) if positions else (file, "")
            node = _split(data, path)[0]
            out.append(
                Finding(where, line, "error", code, message, node, col, json_path(path), via)
            )
    out.sort(key=lambda f: (f.line or 0, f.column or 0))
    return out


def _split(data: Any, path: DataPath) -> tuple[str | None, str]:
    """(node id, field name relative to it) of a data path; an id-less node keeps its index."""
    if len(path) >= 2 and path[0] == "nodes" and isinstance(path[1], int):
        nodes = data.get("nodes") if isinstance(data, Mapping) else None
        raw = nodes[path[1]] if isinstance(nodes, list) and path[1] < len(nodes) else None
        nid = raw.get("id") if isinstance(raw, Mapping) else None
        rest = path[2:]
        if isinstance(nid, str) and nid and rest != ("id",):
            return nid, _dotted(rest)
        return None, _dotted(path)
    return None, _dotted(path)


def _field(data: Any, path: DataPath) -> str:
    """How a message names the value at ``path``: ``retry.max``, ``the node``, ``the graph``."""
    node, field = _split(data, path)
    return field or ("the node" if node else "the graph")


def _dotted(path: DataPath) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


_TYPES = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "empty",
}


def _translate(err: Any, data: Any, hint: str) -> Iterator[Issue]:
    path: DataPath = tuple(err.absolute_path)
    schema = err.schema if isinstance(err.schema, Mapping) else {}
    hint = schema.get("description") or hint
    kw, inst = err.validator, err.instance
    field = _field(data, path)
    if kw == "oneOf" and len(path) == 2 and path[0] == "nodes":
        yield from _kind(path, inst)
    elif kw in ("anyOf", "oneOf"):
        yield from _union(err, path, hint, data)
    elif kw == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        for key in (k for k in inst if k not in allowed):
            yield (*path, key), "unknown-key", unknown_key(key, allowed, field)
    elif kw == "required":
        for key in (k for k in err.validator_value if k not in inst):
            about = _describe(schema.get("properties", {}).get(key))
            yield path, "missing-key", f"{field} needs {key}: — {about}"
    elif kw == "type":
        yield path, "wrong-type", _wrong_type(err.validator_value, inst, path, field, hint)
    elif kw == "enum":
        yield path, "not-allowed", _not_in(inst, [str(v) for v in err.validator_value], field, hint)
    elif kw == "const":
        yield path, "not-allowed", f"{field}: {show(inst)} is not allowed{_why(hint)}"
    elif kw == "not":
        yield from _refused(err, path)
    elif kw == "pattern" and "propertyNames" in err.relative_schema_path:
        yield path, "bad-name", f"{field}: key {show(inst)} is not valid{_why(hint, 'want ')}"
    elif kw == "pattern":
        yield path, "bad-value", f"{field}: {show(inst)} is not valid{_why(hint, 'want ')}"
    elif kw in ("minimum", "exclusiveMinimum", "maximum"):
        bound = {"minimum": "at least", "exclusiveMinimum": "greater than"}.get(kw, "at most")
        limit = f"{bound} {err.validator_value}"
        yield path, "out-of-range", f"{field}: {show(inst)} must be {limit}{_why(hint)}"
    elif kw in ("minItems", "minLength"):
        yield path, "empty", f"{field} is empty{_why(hint)}"
    elif kw == "uniqueItems":
        dup = next((x for i, x in enumerate(inst) if x in inst[:i]), None)
        yield path, "repeated", f"{field} lists {show(dup)} twice — each may appear once"
    else:
        yield path, "schema", f"{field}: {err.message}"


def _refused(err: Any, path: DataPath) -> Iterator[Issue]:
    """A name the schema refuses (``$defs/envName``'s ``not``), told with the reason its branch
    gives; a key is located at its own line."""
    name = err.instance
    if "propertyNames" in err.relative_schema_path:
        path = (*path, name)
    branches = err.validator_value.get("anyOf", [err.validator_value])
    why = next((b.get("description", "") for b in branches if compile_schema(b)(name)), "")
    yield path, "env-refused", f"env: {show(name)} may not be set by a graph{_why(why)}"


def _union(err: Any, path: DataPath, hint: str, data: Any) -> Iterator[Issue]:
    """anyOf/oneOf: explain the branch the value's type picks, else list what is accepted."""
    branches: dict[int, list[Any]] = {}
    for sub in err.context or ():
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    fitting = [errs for errs in branches.values() if not any(map(_wrong_kind, errs))]
    if len(fitting) == 1:
        for sub in fitting[0]:
            yield from _translate(sub, data, hint)
        return
    want = _why(hint, "want ")
    yield path, "wrong-type", f"{_field(data, path)}: {show(err.instance)} is not valid{want}"


def _wrong_kind(err: Any) -> bool:
    """Whether ``err`` says the value itself has a type no alternative takes."""
    if err.relative_path:
        return False
    if err.validator in ("anyOf", "oneOf"):
        subs = list(err.context or ())
        return bool(subs) and all(map(_wrong_kind, subs))
    return bool(err.validator == "type")


def _kind(path: DataPath, node: Any) -> Iterator[Issue]:
    """The node-kind oneOf, told in the node's own terms instead of three branch failures."""
    if not isinstance(node, Mapping) or ("type" in node and node["type"] != "gate"):
        return  # not a mapping, or a bad `type:` the const check already reports
    said = [
        k
        for k, hit in (
            ("prompt:", "prompt" in node),
            ("run:", "run" in node),
            ("type: gate", node.get("type") == "gate"),
        )
        if hit
    ]
    if len(said) > 1:
        listed = " and ".join([", ".join(said[:-1]), said[-1]])
        yield path, "node-kind", f"declares both {listed} — {KINDS}"
        return
    if not said:
        yield path, "node-kind", f"declares no kind — {KINDS}; add the one this node is"
        return
    branch = {"prompt:": "agentNode", "run:": "shellNode", "type: gate": "gateNode"}[said[0]]
    spec = graph_schema()["$defs"][branch]["properties"]
    extra = [k for k in node if spec.get(k) is False]
    if not extra:
        return
    keys = ", ".join(f"{k}:" for k in extra)
    if branch == "gateNode":
        takes = [k for k in graph_schema()["$defs"]["node"]["properties"] if k not in spec]
        why = (
            f"a gate runs nothing and pauses for a human decision; it takes only {', '.join(takes)}"
        )
        yield (*path, extra[0]), "node-kind", f"a gate (type: gate) does not take {keys} — {why}"
    else:
        why = (
            "agent-session settings do not apply to a command; drop them, or make this an "
            "agent node with prompt:"
        )
        yield (*path, extra[0]), "node-kind", f"a shell node (run:) does not take {keys} — {why}"


def _wrong_type(want: str | list[str], value: Any, path: DataPath, field: str, hint: str) -> str:
    wants = [want] if isinstance(want, str) else list(want)
    said = " or ".join(_TYPES.get(w, w) for w in wants)
    text = f"{field}: {show(value)} is not {said}"
    quotable = isinstance(value, bool | int | float | date) and "string" in wants
    if quotable and path and isinstance(path[-1], str):
        text += f'; quote it if you mean the text: {path[-1]}: "{_yaml_text(value)}"'
    elif value is None:
        text += "; write a value after the colon or drop the key"
    return text + _why(hint)


def _yaml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value.isoformat() if isinstance(value, date) else str(value)


def _not_in(value: Any, allowed: list[str], field: str, hint: str) -> str:
    import difflib

    close = difflib.get_close_matches(str(value), allowed, n=1, cutoff=0.6)
    guess = f' (did you mean "{close[0]}"?)' if close else ""
    return f"{field}: {show(value)} is not one of {', '.join(allowed)}{guess}{_why(hint)}"


def _describe(sub: Any) -> str:
    if not isinstance(sub, Mapping):
        return "required"
    return _lower(sub.get("description") or "required")


def _why(hint: str, lead: str = "") -> str:
    return f" — {lead}{_lower(hint)}" if hint else ""


def _lower(text: str) -> str:
    text = text.rstrip(".")
    return text[:1].lower() + text[1:] if text[1:2].islower() or text[1:2] == " " else text
