"""Pure: structured replies — an agent node's ``output_schema`` checked as a JSON Schema (Draft
2020-12), a reply validated against it with each error at its path, a dotted path read from a
reply or looked up in the schema, and a value as the text a placeholder holds. Imports nothing
of omg: the graph's checks and the leg's fields read it from deep in their chains (a reply's
text is read as JSON by ``replytext``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

#: The most validation errors a correction turn or a failure detail names.
ERRORS_SHOWN = 10
#: The first line of the turn that asks a session to correct its reply (the stub model tells a
#: correction turn by it).
CORRECTION_OPENING = "omg: your reply does not match the required output schema."
#: Where a failing verify's evidence starts in a feedback payload (``leg/judge``).
EVIDENCE_MARK = "\n\n--- omg: verify evidence ---"
#: One segment of a dotted path: a property name, or an array index.
SEGMENT = re.compile(r"[A-Za-z0-9_-]+")


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is no JSON Schema omg may use (None when it is): not Draft 2020-12 valid,
    not an object, a ``$ref`` that leaves the schema (a remote one would be fetched) or that
    cannot be followed to an end, or nesting too deep to check at all."""
    try:
        return _problem(schema)
    except RecursionError:
        return (
            "it nests too deeply to be checked; define the deep parts under $defs and refer to "
            "them with $ref"
        )


#: The deepest an output_schema may nest (a deeper one is built with $defs and $ref).
MAX_SCHEMA_DEPTH = 64


def _problem(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return f"a JSON Schema is an object, not {type(schema).__name__}"
    if _depth(schema) > MAX_SCHEMA_DEPTH:
        return (
            f"it nests more than {MAX_SCHEMA_DEPTH} levels deep; define the deep parts under "
            "$defs and refer to them with $ref"
        )
    unfollowed = _ref_problem(schema)
    if unfollowed is not None:
        return unfollowed
    if _plain(schema):  # the common vocabulary, well formed: no need to load jsonschema
        return None
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = _path(exc.absolute_path)
        return f"it is not a valid Draft 2020-12 schema: {where}: {exc.message}"
    return None


def _depth(value: Any) -> int:
    """How deep ``value`` nests (objects and lists), counted without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, Mapping | list):
            deepest = max(deepest, level)
            todo += [(v, level + 1) for v in (item.values() if isinstance(item, Mapping) else item)]
    return deepest


_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
_TEXT = frozenset({"title", "description", "$comment", "$schema", "$id"})
_COUNTS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                     "maxProperties"})  # fmt: skip
_NUMBERS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def _plain(schema: Any) -> bool:
    """Whether ``schema`` uses only the common keywords, each well formed (then it is a valid
    Draft 2020-12 schema without asking jsonschema, which `omg lint` does not load)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping):
        return False
    for key, arg in schema.items():
        if key in _TEXT:
            ok = isinstance(arg, str)
        elif key == "type":
            names = [arg] if isinstance(arg, str) else arg
            ok = isinstance(names, list) and bool(names)
            ok = ok and all(isinstance(n, str) and n in _TYPES for n in names)
            ok = ok and len(set(names)) == len(names)
        elif key in ("enum", "required"):
            ok = isinstance(arg, list) and (key == "enum" or all(isinstance(x, str) for x in arg))
        elif key == "const":
            ok = True
        elif key in _COUNTS:
            ok = isinstance(arg, int) and not isinstance(arg, bool) and arg >= 0
        elif key in _NUMBERS:
            ok = isinstance(arg, int | float) and not isinstance(arg, bool)
        elif key in ("properties", "$defs"):
            ok = isinstance(arg, Mapping) and all(_plain(v) for v in arg.values())
        elif key in ("items", "additionalProperties"):
            ok = _plain(arg)
        elif key in ("allOf", "anyOf", "oneOf"):
            ok = isinstance(arg, list) and bool(arg) and all(_plain(v) for v in arg)
        elif key == "$ref":
            ok = isinstance(arg, str) and arg.startswith("#/$defs/")
        else:
            ok = False
        if not ok:
            return False
    return True


#: Keywords whose checks can take time out of proportion to the value they check.
_UNBOUNDED = ("$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "pattern",
              "patternProperties", "unevaluatedItems", "unevaluatedProperties", "contains",
              "dependentSchemas")  # fmt: skip


#: The most bytes of JSON an ``enum`` or ``const`` a leg checks itself may hold: each entry is
#: compared with the value whole.
_SMALL = 64
_LISTED = ("enum", "const")


def linear(schema: Any) -> bool:
    """Whether checking a value against ``schema`` takes time in proportion to the value: the
    common keywords only, without references, combinators or patterns, and no ``enum`` or
    ``const`` past ``_SMALL`` bytes. Then the leg checks a reply itself; any other schema is
    checked in a child under a time limit."""
    try:
        for n in _subschemas(schema).values():
            if isinstance(n, Mapping) and (
                any(k in n for k in _UNBOUNDED)
                or any(k in n and len(json.dumps(n[k], default=str)) > _SMALL for k in _LISTED)
            ):
                return False
        return _plain(schema)
    except RecursionError:
        return False


#: Keywords whose schemas apply to the very value their schema applies to (not to a part of it).
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
#: Draft 2020-12's keywords whose value is a schema, a list of schemas, or a map of them; the
#: values of every other keyword are data (``const``, ``default``, …) or not read at all.
_ONE_SCHEMA = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains",
                         "propertyNames", "unevaluatedItems", "unevaluatedProperties",
                         "contentSchema"})  # fmt: skip
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})  # fmt: skip
_REFS = ("$ref", "$dynamicRef")
_ANCHORS = ("$anchor", "$dynamicAnchor")


def _ref_problem(root: Mapping[str, Any]) -> str | None:
    """Why the references of schema ``root`` cannot be followed to an end (None when they
    can): one that leaves the schema, an ``$id`` below the top (a schema of its own, resolved
    apart), an anchor named twice, a reference that names no schema in it, or one that leads
    back to itself through schemas applied to the same value (``$ref``, ``allOf``, ``not``,
    …), a check that never ends."""
    schemas = _subschemas(root)
    named = _named(schemas)
    anchors = dict(named)
    for name, node in named:
        if anchors[name] is not node:
            return f"the anchor {name!r} is named twice; give each anchor its own name"
    for at, node in schemas.items():
        if not isinstance(node, Mapping):
            continue
        for key in _REFS:
            ref = node.get(key)
            if key in node and not isinstance(ref, str):
                shown = json.dumps(ref, default=str)[:60]
                return f"{key} is {shown}, not a reference (a string: #/$defs/…)"
            if isinstance(ref, str) and not ref.startswith("#"):
                return (
                    f"{key} {ref!r} points outside the schema; only local references "
                    "(#/$defs/…) are followed — inline what it names"
                )
        if at and isinstance(node.get("$id"), str):
            return (
                "an $id inside the schema starts a schema of its own, whose references omg "
                "does not follow; keep $id at the top only"
            )
    for node in schemas.values():
        for key in _REFS:
            ref = node.get(key) if isinstance(node, Mapping) else None
            if isinstance(ref, str) and _target(schemas, anchors, ref) is _NOWHERE:
                return (
                    f"{key} {ref!r} names no schema in it; define what it names under $defs "
                    "(a JSON pointer, or an $anchor's name) or fix the name"
                )
    loop = _ref_loop(schemas, anchors)
    if loop is None:
        return None
    return (
        f"$ref {loop!r} leads back to itself without reaching into a part of the value, so "
        "checking a reply would never end; a definition may refer to itself only from inside "
        "properties or items"
    )


_NOWHERE = object()


def _named(schemas: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Each ``$anchor`` / ``$dynamicAnchor`` name and the schema that carries it."""
    return [
        (n[k], n)
        for n in schemas.values()
        if isinstance(n, Mapping)
        for k in _ANCHORS
        if isinstance(n.get(k), str)
    ]


def _target(schemas: Mapping[str, Any], anchors: Mapping[str, Any], ref: str) -> Any:
    """The schema local reference ``ref`` names — a JSON pointer (percent-decoded) to where a
    schema sits, or an anchor's name as written — or ``_NOWHERE``."""
    fragment = ref.removeprefix("#")
    if not fragment or fragment.startswith("/"):
        return schemas.get(unquote(fragment), _NOWHERE)
    return anchors.get(fragment, _NOWHERE)


def _ref_loop(schemas: Mapping[str, Any], anchors: Mapping[str, Any]) -> str | None:
    """The first reference on a loop of schemas applied to the same value, or None."""

    def in_place(node: Any) -> list[tuple[str, Any]]:
        if not isinstance(node, Mapping):
            return []
        out: list[tuple[str, Any]] = []
        for key in _REFS:
            ref = node.get(key)
            if isinstance(ref, str):
                out.append((ref, _target(schemas, anchors, ref)))
        for key in _IN_PLACE_LISTS:
            if isinstance(node.get(key), list):
                out += [("", sub) for sub in node[key]]
        out += [("", node[key]) for key in _IN_PLACE_ONE if key in node]
        deps = node.get("dependentSchemas")
        if isinstance(deps, Mapping):
            out += [("", sub) for sub in deps.values()]
        return out

    done: set[int] = set()
    for start in schemas.values():
        if not isinstance(start, Mapping) or id(start) in done:
            continue
        path: dict[int, str] = {id(start): ""}  # the schemas on the walk, and the $ref into each
        stack = [(start, iter(in_place(start)))]
        while stack:
            node, edges = stack[-1]
            step = next(edges, None)
            if step is None:
                stack.pop()
                path.pop(id(node), None)
                done.add(id(node))
                continue
            ref, nxt = step
            if not isinstance(nxt, Mapping) or id(nxt) in done:
                continue
            if id(nxt) in path:
                return ref or next((r for r in path.values() if r), "$ref")
            path[id(nxt)] = ref
            stack.append((nxt, iter(in_place(nxt))))
    return None


def _subschemas(root: Any) -> dict[str, Any]:
    """Every schema in ``root`` (an object or a boolean) by its JSON pointer, ``""`` the root:
    the values of the keywords that hold schemas, read as Draft 2020-12 reads them."""
    out: dict[str, Any] = {}
    todo: list[tuple[str, Any]] = [("", root)]
    while todo:
        at, node = todo.pop()
        out[at] = node
        if not isinstance(node, Mapping):
            continue
        for key, value in node.items():
            here = f"{at}/{_escaped(key)}"
            if key in _ONE_SCHEMA:
                todo.append((here, value))
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                todo += [(f"{here}/{i}", sub) for i, sub in enumerate(value)]
            elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
                todo += [(f"{here}/{_escaped(k)}", sub) for k, sub in value.items()]
    return out


def _escaped(key: object) -> str:
    """A key as a JSON pointer segment (RFC 6901): ``~`` as ``~0``, ``/`` as ``~1``."""
    return str(key).replace("~", "~0").replace("/", "~1")


def errors(
    schema: Mapping[str, Any], value: Any, root: Mapping[str, Any] | None = None
) -> list[str]:
    """Each way ``value`` breaks ``schema`` (a part of ``root``, whose references it follows,
    when given): ``$.findings[0].line: 'x' is not of type 'integer'``, in path order, at most
    ``ERRORS_SHOWN`` (and a line counting the rest)."""
    from jsonschema import Draft202012Validator

    whole = Draft202012Validator(schema if root is None else root)
    check = whole if root is None else whole.evolve(schema=schema)
    found = sorted(
        check.iter_errors(value),
        key=lambda e: (_path(e.absolute_path), e.message),
    )
    shown = found[:ERRORS_SHOWN]  # a reply's key may be a megabyte long: each part is clipped
    out = [f"{_clip(_path(e.absolute_path))}: {_clip(e.message)}" for e in shown]
    if len(found) > ERRORS_SHOWN:
        out.append(f"… and {len(found) - ERRORS_SHOWN} more")
    return out


def _clip(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[:limit] + " …"


def _path(parts: Sequence[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def correction(problems: Sequence[str]) -> str:
    """The turn that asks the same session to answer again, naming what was wrong."""
    listed = "\n".join(f"- {p}" for p in problems)
    return (
        f"{CORRECTION_OPENING}\n\nThe validator found:\n{listed}\n\n"
        "Answer again with the whole reply in the required structure, correcting these, and "
        "nothing else."
    )


def split(path: str) -> tuple[str, ...]:
    """A dotted path's segments (``findings.0.file`` → ``findings``, ``0``, ``file``)."""
    return tuple(path.split(".")) if path else ()


def well_formed(path: str) -> bool:
    return all(SEGMENT.fullmatch(s) for s in split(path))


def get(value: Any, path: str) -> Any:
    """The value at ``path`` in a reply; KeyError naming the first segment not there."""
    at = value
    for seg in split(path):
        if isinstance(at, Mapping) and seg in at:
            at = at[seg]
        elif isinstance(at, list) and seg.isdigit() and int(seg) < len(at):
            at = at[int(seg)]
        else:
            raise KeyError(seg)
    return at


def subschema(schema: Mapping[str, Any], path: str) -> Mapping[str, Any] | None:
    """The part of ``schema`` that defines ``path`` (None when the schema defines no such
    field): ``properties`` by name, ``items`` / ``prefixItems`` by index, through local
    ``$ref`` s and ``allOf`` / ``anyOf`` / ``oneOf`` branches."""
    schemas = _subschemas(schema)
    anchors = dict(_named(schemas))

    def resolve(ref: str) -> Any:
        found = _target(schemas, anchors, ref)
        return None if found is _NOWHERE else found

    found = _sub(resolve, schema, split(path), 0)
    return found if isinstance(found, Mapping) else None


def _sub(resolve: Callable[[str], Any], at: Any, segs: tuple[str, ...], depth: int) -> Any:
    if not isinstance(at, Mapping) or depth > 32:
        return None
    ref = at.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        target = resolve(ref)
        if target is not None:
            found = _sub(resolve, target, segs, depth + 1)
            if found is not None:
                return found
    if not segs:
        return at
    head, rest = segs[0], segs[1:]
    props = at.get("properties")
    if isinstance(props, Mapping) and head in props:
        found = _sub(resolve, props[head], rest, depth + 1)
        if found is not None:
            return found
    if head.isdigit():
        prefix = at.get("prefixItems")
        if isinstance(prefix, list) and int(head) < len(prefix):
            found = _sub(resolve, prefix[int(head)], rest, depth + 1)
            if found is not None:
                return found
        items = at.get("items")
        if isinstance(items, Mapping):
            found = _sub(resolve, items, rest, depth + 1)
            if found is not None:
                return found
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in at.get(key) or ():
            found = _sub(resolve, branch, segs, depth + 1)
            if found is not None:
                return found
    return None


def as_text(value: Any) -> str:
    """A value as a placeholder holds it: a string as it is, anything else as JSON text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def pretty(value: Any) -> str:
    """A structured reply as its artifact holds it: indented JSON, keys as the reply gave them."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"
