"""Structured replies in a graph: an agent node's ``output_schema`` checked as a schema, the
fields ``success_check.output_equals`` and ``feedback.findings`` name checked against it, and
``{{ outputs.NODE.FIELD }}`` resolved to a node upstream that defines the field (pure)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from omg import fastschema, replyschema
from omg.graph.feedback import closest

if TYPE_CHECKING:
    from omg.graph.model import Graph, Node
    from omg.graph.tokens import Token


def split_ref(graph: Graph, ref: str) -> tuple[str, str] | None:
    """``review.findings.0`` → (``review``, ``findings.0``): the longest node id the reference
    starts with (node ids may hold dots), and the dotted path after it; None for no node."""
    parts = ref.split(".")
    for cut in range(len(parts), 0, -1):
        nid = ".".join(parts[:cut])
        if nid in graph.by_id:
            return nid, ".".join(parts[cut:])
    return None


def node_rules(n: Node) -> Iterator[tuple[str, str, str]]:
    """(code, field, message) for one node's structured-reply keys."""
    sc = n.success_check
    if n.output_schema_path is not None:
        yield (
            "output-schema-file",
            "output_schema",
            f"output_schema names the file {n.output_schema_path!r}, which is read only when a "
            "graph file is loaded; give the schema inline here",
        )
        return
    schema = n.schema
    if schema is None:
        if sc.output_equals:
            yield (
                "output-equals-no-schema",
                "success_check.output_equals",
                "output_equals reads fields of a structured reply, and this node declares no "
                "output_schema; add output_schema: (the JSON Schema of its reply) or use "
                "result_matches",
            )
        if n.feedback is not None and n.feedback.findings is not None:
            yield (
                "findings-no-schema",
                "feedback.findings",
                "feedback.findings names a field of a structured reply, and this node declares "
                "no output_schema; add output_schema: or drop findings:",
            )
        return
    why = replyschema.schema_problem(schema)
    if why is not None:
        yield "output-schema", "output_schema", f"output_schema is refused: {why}"
        return
    for path, expected in sc.output_equals:
        field = f"success_check.output_equals.{path}"
        yield from _field(schema, path, field, "output_equals")
        sub = replyschema.subschema(schema, path)
        if sub is None:
            continue
        value = json.loads(expected)
        if fastschema.conforms(sub, value, schema):
            continue
        try:
            wrong = replyschema.errors(sub, value, root=schema)
        except RecursionError:
            wrong = ["$: it nests too deeply for the schema to be applied to it"]
        if wrong:
            yield (
                "output-equals-value",
                field,
                f"output_equals {path}: {expected} can never hold — the schema refuses that "
                f"value ({wrong[0].removeprefix('$: ')}); use a value the schema allows",
            )
    if n.feedback is not None and n.feedback.findings is not None:
        yield from _field(schema, n.feedback.findings, "feedback.findings", "feedback.findings")


def _field(schema: Any, path: str, field: str, what: str) -> Iterator[tuple[str, str, str]]:
    if replyschema.subschema(schema, path) is None:
        defined = ", ".join(sorted(_top_fields(schema))) or "none"
        yield (
            "output-field",
            field,
            f"{what} names the field {path!r}, which the node's output_schema does not define "
            f"(its fields: {defined}); name a field of the schema, or add it to the schema"
            f"{closest(path, _top_fields(schema))}",
        )


def _top_fields(schema: Any) -> list[str]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return sorted(props) if isinstance(props, dict) else []


def output_ref(
    graph: Graph, upstream: Callable[[str, str], bool], node: Node, head: str, tok: Token
) -> Iterator[tuple[str, str]]:
    """``{{ outputs.NODE.FIELD }}``: NODE upstream of ``node``, with an output_schema that
    defines FIELD."""
    found = split_ref(graph, tok.ref)
    if found is None:
        yield (
            "placeholder-node",
            f'{head} references "{tok.ref.split(".")[0]}", which is not a node in the '
            f"graph{closest(tok.ref.split('.')[0], graph.ids)}",
        )
        return
    nid, path = found
    if nid == node.id:
        yield (
            "placeholder-own-output",
            f"{head} references this node's own reply, which cannot exist while the node runs",
        )
        return
    if not upstream(nid, node.id):
        yield (
            "placeholder-not-ancestor",
            f'{head} references node "{nid}", which is not upstream of "{node.id}" — its reply '
            f'may not exist yet when this node runs; add "{nid}" to depends_on (directly or '
            "through a parent)",
        )
        return
    source = graph.by_id[nid]
    if source.schema is None:
        yield (
            "placeholder-output",
            f'{head} reads a field of "{nid}"\'s structured reply, and "{nid}" declares no '
            f"output_schema; declare one, or use {{{{ artifacts.{nid} | inline }}}}",
        )
        return
    if path and not replyschema.well_formed(path):
        yield "placeholder-output", f"{head}: {path!r} is not a dotted path of field names"
        return
    if path and replyschema.subschema(source.schema, path) is None:
        defined = ", ".join(_top_fields(source.schema)) or "none"
        yield (
            "placeholder-output",
            f'{head} names the field {path!r}, which "{nid}"\'s output_schema does not define '
            f"(its fields: {defined}); name a field of the schema"
            f"{closest(path, _top_fields(source.schema))}",
        )
