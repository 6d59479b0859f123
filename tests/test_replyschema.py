"""Structured replies, pure: schemas checked, replies validated at their paths, fields found
in a reply and in its schema, and values as placeholder text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omg import replyschema as rs

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["verdict", "findings"],
    "$defs": {"finding": {"type": "object", "properties": {"line": {"type": "integer"}}}},
    "properties": {
        "verdict": {"enum": ["ship", "fix"]},
        "findings": {"type": "array", "items": {"$ref": "#/$defs/finding"}},
        "meta": {"allOf": [{"properties": {"who": {"type": "string"}}}]},
    },
}


@pytest.mark.parametrize(
    ("schema", "refused"),
    [
        (SCHEMA, None),
        ({"type": "objekt"}, "not a valid Draft 2020-12 schema: $.type"),
        ([], "is an object, not list"),
        ({"$ref": "https://example.com/s.json"}, "points outside the schema"),
        ({"properties": {"a": {"$ref": "file:///etc/passwd"}}}, "points outside the schema"),
        ({"$ref": "#"}, "leads back to itself"),
        ({"$defs": {"x": {"$ref": "#/$defs/x"}}, "properties": {"v": {"$ref": "#/$defs/x"}}},
         "$ref '#/$defs/x' leads back to itself"),
        ({"$defs": {"x": {"type": "object", "allOf": [{"$ref": "#/$defs/y"}]},
                    "y": {"not": {"$ref": "#/$defs/x"}}}}, "leads back to itself"),
        ({"$defs": {"x": {"if": {"type": "string"}, "else": {"$ref": "#/$defs/x"}}}},
         "leads back to itself"),
        # a tree: the reference reaches into items, so each check is of a smaller value
        ({"$defs": {"node": {"type": "object", "properties": {"kids": {
            "type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}, None),
        ({"type": "object", "default": {"$ref": "#"}}, None),  # data, never applied
        ({"$anchor": "m", "anyOf": [{"$ref": "#m"}]}, "$ref '#m' leads back to itself"),
        ({"$dynamicAnchor": "m", "anyOf": [{"$dynamicRef": "#m"}]}, "leads back to itself"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}},
         "$ref '#/$defs/missing' names no schema in it"),
        ({"properties": {"a": {"$ref": "#nowhere"}}}, "names no schema in it"),
        # references read as Draft 2020-12 reads them: RFC 6901 pointers to where a schema
        # sits, anchors as written; data, unknown keywords and a keyword's own value are no schema
        ({"type": "object", "properties": {"a": {"$ref": "#/"}}}, "names no schema in it"),
        ({"$defs": {"a": {}}, "$ref": "#/$defs/"}, "names no schema in it"),
        ({"$defs": {"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
          "$ref": "#/$defs/x/anyOf/0"}, None),
        ({"prefixItems": [{"type": "integer"}], "items": {"$ref": "#/prefixItems/0"}}, None),
        ({"$defs": {"a/b~": {"type": "integer"}}, "$ref": "#/$defs/a~1b~0"}, None),
        ({"$defs": {"a": {"$anchor": "foo", "type": "string"}}, "$ref": "#%66oo"},
         "names no schema in it"),
        ({"type": "object", "$ref": "#/type"}, "names no schema in it"),
        ({"$defs": {"type": {"type": "string"}}, "$ref": "#/$defs"}, "names no schema in it"),
        ({"const": {"$ref": "#/nope"}, "$ref": "#/const"}, "names no schema in it"),
        ({"x-lib": {"s": {"pattern": "("}}, "$ref": "#/x-lib/s"}, "names no schema in it"),
        ({"type": "object", "properties": {"default": {"$ref": "#/$defs/nope"}}},
         "names no schema in it"),
        ({"properties": {"enum": {"$ref": "#/properties/enum"}}}, "leads back to itself"),
        ({"x-foo": {"$anchor": "a", "type": "string"}, "$ref": "#a"}, "names no schema in it"),
        ({"type": "object", "properties": {"$ref": {"type": "string"}}}, None),
        ({"const": {"$ref": "http://x"}}, None),
        ({"$defs": {"y": {"$anchor": "a", "type": "string"}},
          "anyOf": [{"$anchor": "a", "allOf": [{"$ref": "#a"}]}, True], "$ref": "#a"},
         "the anchor 'a' is named twice"),
        ({"$ref": 5}, "$ref is 5, not a reference"),
        ({"type": [{}]}, "not a valid Draft 2020-12 schema"),  # was a TypeError traceback
        ({"type": [["string"]]}, "not a valid Draft 2020-12 schema"),
        ({"$defs": {"a b": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/a%20b"}}},
         None),
        ({"properties": {"a": {"$id": "inner", "$ref": "#/$defs/x", "$defs": {"x": True}}}},
         "an $id inside the schema"),
        ({"$id": "reply", "type": "object"}, None),
        ({"type": "object", "enum": [{"$ref": "#/nowhere"}]}, None),  # data, never followed
    ],
)  # fmt: skip
def test_a_schema_is_checked_and_a_reference_outside_it_refused(schema: Any, refused: Any) -> None:
    said = rs.schema_problem(schema)
    assert (said is None) if refused is None else (refused in (said or "")), said


def _nested(key: str, levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for _ in range(levels):
        schema = {"not": schema} if key == "not" else {"properties": {"a": schema}}
    return schema


@pytest.mark.parametrize("key", ["not", "properties"])
def test_a_schema_nested_past_what_a_check_can_follow_is_refused_not_raised(key: str) -> None:
    for levels in (70, 3000):  # 3000: past what any recursive check could follow
        assert "nests more than 64 levels deep" in (rs.schema_problem(_nested(key, levels)) or "")
    assert rs.schema_problem(_nested(key, 20)) is None


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ({"verdict": "ship", "findings": []}, []),
        ({"verdict": "maybe", "findings": []},
         ["$.verdict: 'maybe' is not one of ['ship', 'fix']"]),
        ({"verdict": "fix", "findings": [{"line": "x"}]},
         ["$.findings[0].line: 'x' is not of type 'integer'"]),
        ({}, ["$: 'findings' is a required property", "$: 'verdict' is a required property"]),
    ],
)  # fmt: skip
def test_each_error_names_its_path(value: Any, errors: list[str]) -> None:
    assert rs.errors(SCHEMA, value) == errors


@pytest.mark.parametrize(
    ("path", "defined"),
    [
        ("verdict", True),
        ("findings", True),
        ("findings.0.line", True),  # through items and a local $ref
        ("meta.who", True),  # through allOf
        ("findings.0.file", False),
        ("verdikt", False),
        ("", True),
    ],
)
def test_a_field_is_found_in_the_schema(path: str, defined: bool) -> None:
    assert (rs.subschema(SCHEMA, path) is not None) == defined


def test_a_field_is_read_from_a_reply_and_given_as_text() -> None:
    reply = {"verdict": "fix", "findings": [{"line": 3}]}
    assert rs.as_text(rs.get(reply, "verdict")) == "fix"
    assert rs.as_text(rs.get(reply, "findings")) == '[{"line": 3}]'
    assert rs.get(reply, "findings.0.line") == 3
    with pytest.raises(KeyError):
        rs.get(reply, "findings.1")


def test_the_correction_turn_names_each_error_and_opens_with_its_mark() -> None:
    text = rs.correction(["$.verdict: 'maybe' is not one of ['ship', 'fix']"])
    assert text.startswith(rs.CORRECTION_OPENING)
    assert "- $.verdict: 'maybe'" in text


_DEF_NAMES = ("a", "b", "c")


def _schemas(depth: int) -> st.SearchStrategy[Any]:
    refs = [f"#/$defs/{n}" for n in _DEF_NAMES] + [f"#{n}" for n in _DEF_NAMES] + ["#"]
    ref = st.sampled_from(refs).map(lambda r: {"$ref": r})  # by pointer, by anchor, the root
    leaf = st.one_of(ref, st.just({"type": "integer"}), st.just({"type": "object"}), st.just(True))
    if depth == 0:
        return leaf
    sub = _schemas(depth - 1)
    return st.one_of(
        leaf,
        st.lists(sub, min_size=1, max_size=2).map(lambda xs: {"allOf": xs}),
        st.lists(sub, min_size=1, max_size=2).map(lambda xs: {"anyOf": xs}),
        sub.map(lambda x: {"not": x}),
        st.tuples(sub, sub).map(lambda t: {"if": t[0], "else": t[1]}),
        sub.map(lambda x: {"type": "object", "properties": {"k": x}}),
        sub.map(lambda x: {"type": "array", "items": x}),
    )


@settings(max_examples=150, deadline=None)
@given(
    defs=st.fixed_dictionaries({n: _schemas(2) for n in _DEF_NAMES}),
    top=_schemas(2),
    value=st.recursive(
        st.integers(0, 3) | st.none(),
        lambda kids: st.lists(kids, max_size=2) | st.dictionaries(st.just("k"), kids, max_size=1),
        max_leaves=4,
    ),
)
def test_property_a_schema_it_accepts_checks_any_reply_to_an_end(
    defs: dict[str, Any], top: Any, value: Any
) -> None:
    named = {n: {**d, "$anchor": n} if isinstance(d, dict) else {"allOf": [d], "$anchor": n}
             for n, d in defs.items()}  # fmt: skip
    schema = {"allOf": [top], "$defs": named}
    if rs.schema_problem(schema) is not None:
        return
    rs.errors(schema, value)  # never a RecursionError: a loop of references was refused


@pytest.mark.parametrize(
    ("schema", "linear"),
    [
        (SCHEMA, False),  # a $ref: checked in a child
        ({"type": "object", "required": ["verdict"], "properties": {
            "verdict": {"enum": ["ship", "fix"]},
            "findings": {"type": "array", "items": {"type": "object", "properties": {
                "line": {"type": "integer", "minimum": 1}}}}}}, True),
        ({"type": "string", "pattern": "^([a-z]+\\s?)+$"}, False),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, False),
        ({"type": "object", "unevaluatedProperties": False}, False),
        ({"type": "object", "properties": {"pattern": {"type": "string"}}}, True),  # a name
        ({"type": "array", "items": {"enum": list(range(10_000))}}, False),  # each compared
        ({"enum": ["ship", "fix"]}, True),
        ({"const": "x" * 200}, False),
        (True, True),
    ],
)  # fmt: skip
def test_only_a_schema_whose_check_follows_the_replys_size_is_checked_in_the_leg(
    schema: Any, linear: bool
) -> None:
    assert rs.linear(schema) is linear


ANCHORED: dict[str, Any] = {
    "$defs": {"a b": {"properties": {"x": {"type": "integer"}}},
              "f": {"$anchor": "foo", "properties": {"y": {"type": "string"}}}},
    "properties": {"p": {"$ref": "#/$defs/a%20b"}, "q": {"$ref": "#foo"}},
}  # fmt: skip


@pytest.mark.parametrize(
    ("path", "defined"), [("p.x", True), ("q.y", True), ("p.y", False), ("q.x", False)]
)
def test_a_field_is_found_through_a_percent_encoded_pointer_and_an_anchor(
    path: str, defined: bool
) -> None:
    assert rs.schema_problem(ANCHORED) is None
    assert (rs.subschema(ANCHORED, path) is not None) == defined
