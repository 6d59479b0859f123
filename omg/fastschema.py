"""The compiled schema check: a JSON Schema turned once into nested predicates that say only
"valid or not", so a valid file never pays for importing jsonschema (~150 ms).

It covers the keywords omg's own schemas use (the graph's, state.json's and the events');
compiling a schema that uses any other keyword raises, so a schema change can never be checked
more loosely than jsonschema would check it. When the answer is "not valid", the caller asks
jsonschema for the reasons. tests/test_fastschema.py proves the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any], bool]
_IGNORED = {"title", "description", "$id", "$schema", "$comment", "default", "examples", "$defs"}
_IGNORED |= {"then", "else"}  # read with their "if"
_OBJECT = ("properties", "additionalProperties", "required")
#: A single ``type`` as one test (``_is_type`` says the same of each name).
_ONE_TYPE: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (
        not isinstance(v, bool)
        and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: booleans are not numbers, 1 equals 1.0, containers compare deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if name == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, (int, float))
    raise ValueError(f"unknown JSON Schema type {name!r}")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def conforms(schema: Mapping[str, Any], value: Any, root: Mapping[str, Any]) -> bool | None:
    """Whether ``value`` conforms to ``schema`` (a part of ``root``), answered by the compiled
    check without loading jsonschema; None when that check cannot judge it."""
    try:
        return compile_schema(schema, root.get("$defs") or {})(value)
    except (ValueError, TypeError, KeyError, RecursionError):
        return None


def compile_schema(schema: Any, defs: Mapping[str, Any] | None = None) -> Check:
    """One predicate for ``schema`` (local ``#/$defs/…`` refs resolved against ``defs``)."""
    if schema is True:
        return lambda v: True
    if schema is False:
        return lambda v: False
    if not isinstance(schema, Mapping):
        raise ValueError(f"not a schema: {schema!r}")
    defs = schema.get("$defs", defs or {})
    checks: list[Check] = []
    if any(key in schema for key in _OBJECT):  # one pass over an object's keys, not three
        checks.append(_object(schema, defs))
    for key, arg in schema.items():
        if key in _IGNORED or key in _OBJECT:
            continue
        checks.append(_keyword(key, arg, schema, defs))
    if len(checks) == 1:
        return checks[0]
    return _every(checks)


def _every(checks: list[Check]) -> Check:
    def every(v: Any) -> bool:  # a loop, not all(…): no generator made per value checked
        for check in checks:  # noqa: SIM110
            if not check(v):
                return False
        return True

    return every


def _object(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Check:
    """``properties``, ``additionalProperties`` and ``required`` checked together."""
    props = {k: compile_schema(s, defs) for k, s in schema.get("properties", {}).items()}
    more = schema.get("additionalProperties", True)
    extra = None if more is True else compile_schema(more, defs)
    required = tuple(schema.get("required", ()))

    def fields(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for k in required:
            if k not in v:
                return False
        for k, x in v.items():
            check = props.get(k, extra)
            if check is not None and not check(x):
                return False
        return True

    return fields


def _keyword(key: str, arg: Any, schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Check:
    if key == "$ref":
        name = str(arg).rsplit("/", 1)[-1]
        if not str(arg).startswith("#/$defs/") or name not in defs:
            raise ValueError(f"unsupported $ref {arg!r}")
        cache: list[Check] = []

        def ref(v: Any) -> bool:  # compiled on first use: definitions may refer to themselves
            if not cache:
                cache.append(compile_schema(defs[name], defs))
            return cache[0](v)

        return ref
    if key == "type":
        if isinstance(arg, str) and arg in _ONE_TYPE:
            return _ONE_TYPE[arg]
        names = [arg] if isinstance(arg, str) else list(arg)
        return lambda v: any(_is_type(v, n) for n in names)
    if key == "const":
        return lambda v: _equal(v, arg)
    if key == "enum":
        if all(type(e) is str for e in arg):
            words = frozenset(arg)
            return lambda v: type(v) is str and v in words
        return lambda v: any(_equal(v, e) for e in arg)
    if key == "minimum":
        return lambda v: not _number(v) or v >= arg
    if key == "maximum":
        return lambda v: not _number(v) or v <= arg
    if key == "exclusiveMinimum":
        return lambda v: not _number(v) or v > arg
    if key == "minLength":
        return lambda v: not isinstance(v, str) or len(v) >= arg
    if key == "pattern":
        rx = re.compile(arg)
        return lambda v: not isinstance(v, str) or rx.search(v) is not None
    if key == "minProperties":
        return lambda v: not isinstance(v, dict) or len(v) >= arg
    if key == "maxProperties":
        return lambda v: not isinstance(v, dict) or len(v) <= arg
    if key == "minItems":
        return lambda v: not isinstance(v, list) or len(v) >= arg
    if key == "uniqueItems":
        if not arg:
            return lambda v: True
        return lambda v: (
            not isinstance(v, list)
            or all(not _equal(v[i], v[j]) for i in range(len(v)) for j in range(i + 1, len(v)))
        )
    if key == "items":
        item = compile_schema(arg, defs)

        def items(v: Any) -> bool:
            if isinstance(v, list):
                for x in v:
                    if not item(x):
                        return False
            return True

        return items
    if key == "propertyNames":
        name_ok = compile_schema(arg, defs)
        return lambda v: not isinstance(v, dict) or all(name_ok(k) for k in v)
    if key == "allOf":
        every = [compile_schema(s, defs) for s in arg]
        return lambda v: all(s(v) for s in every)
    if key == "if":
        cond = compile_schema(arg, defs)
        then = compile_schema(schema.get("then", True), defs)
        other = compile_schema(schema.get("else", True), defs)
        return lambda v: then(v) if cond(v) else other(v)
    if key == "not":
        banned = compile_schema(arg, defs)
        return lambda v: not banned(v)
    if key in ("anyOf", "oneOf"):
        subs = [compile_schema(s, defs) for s in arg]
        if key == "anyOf":
            return lambda v: any(s(v) for s in subs)
        return lambda v: sum(1 for s in subs if s(v)) == 1
    raise ValueError(f"the compiled schema check does not know the keyword {key!r}")
