"""The compiled schema check agrees with jsonschema on every graph and state it is shown."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from omg.fastschema import compile_schema, conforms

ROOT = Path(__file__).resolve().parents[1]
GRAPH_SCHEMA = json.loads((ROOT / "schemas" / "graph.schema.json").read_text())
STATE_SCHEMA = json.loads((ROOT / "schemas" / "state.schema.json").read_text())
CASES = sorted((ROOT / "tests" / "graphs").rglob("*.yaml")) + sorted(
    (ROOT / "graphs").rglob("*.yaml")
)


def agree(schema: dict[str, Any], data: Any) -> None:
    want = jsonschema.Draft202012Validator(schema).is_valid(data)
    assert compile_schema(schema)(data) is want, json.dumps(data, default=str)[:400]


def _load(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (yaml.YAMLError, ValueError):  # not YAML, or a scalar Python cannot read
        return None


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_graph_case_gets_the_same_verdict(path: Path) -> None:
    agree(GRAPH_SCHEMA, _load(path))


def test_the_cases_include_both_verdicts() -> None:
    check = compile_schema(GRAPH_SCHEMA)
    verdicts = {check(_load(p)) for p in CASES}
    assert verdicts == {True, False}


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False)
    | st.sampled_from(["", "x", "a-b", "30s", "PASS", "claude", "gate", "1m"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(
        ["id", "run", "prompt", "type", "max", "on", "rerun", "nodes", "name", "zz"]), inner,
        max_size=3),
    max_leaves=6,
)  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


VALID = [d for d in (_load(p) for p in CASES) if compile_schema(GRAPH_SCHEMA)(d)]


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_mutated_graph_gets_the_same_verdict(data: st.DataObject) -> None:
    doc = copy.deepcopy(data.draw(st.sampled_from(VALID)))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        if not path:
            continue
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = data.draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            parent[path[-1]] = data.draw(JSONISH)
        elif action == "drop":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["zz", "id", "timeout", "retry"]))] = data.draw(
                JSONISH
            )
        else:
            parent.append(data.draw(JSONISH))
    agree(GRAPH_SCHEMA, doc)


def _state() -> dict[str, Any]:
    return {
        "schema": 1, "run_id": "r", "graph_source": "g.yaml", "graph_sha256": "", "graph": {},
        "inputs": {}, "hops": 0, "worktrees": {}, "paused_at": None, "status": "running",
        "cost_usd": 0.0, "seq": 3, "gates": {},
        "legs": [{"leg": 1, "started": "t", "finished": None, "outcome": None, "reason": None}],
        "nodes": {"a": {"verdict": "PASS", "round": 0, "attempts": 1, "cost_usd": 0.5,
                        "cost_unknown": False, "provenance": "exit-only"}},
    }  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_mutated_state_gets_the_same_verdict(data: st.DataObject) -> None:
    doc = _state()
    path = data.draw(st.sampled_from([p for p in _paths(doc) if p]))
    parent: Any = doc
    for key in path[:-1]:
        parent = parent[key]
    if data.draw(st.booleans()):
        parent[path[-1]] = data.draw(JSONISH)
    else:
        del parent[path[-1]]
    agree(STATE_SCHEMA, doc)
    agree(STATE_SCHEMA, _state())


def test_a_keyword_it_does_not_know_is_refused_not_ignored() -> None:
    with pytest.raises(ValueError, match="maxLength"):
        compile_schema({"type": "string", "maxLength": 3})


STUB_SCRIPTS = [
    {"rules": [{"name": "a", "reply": "hi"}]},
    {"rules": [{"name": "a", "error": {"status": 529, "retry_after": 1}}]},
    {"rules": [{"name": "a", "error": {"status": 700}}]},
    {"rules": [{"name": "a", "when": {"call": 0}, "reply": "x"}]},
    {"rules": [{"name": "a", "when": {"call": [1, 2]}, "reply": "x"}]},
    {"rules": [{"name": "a", "turns": [{"tool": "Write"}]}]},
    {"rules": [{"name": "a", "turns": [{"text": "t", "usage": {"input_tokens": 3}}]}]},
    {"rules": [{"name": "a", "reply": "x", "empty": True}]},
    {"rules": [{"name": "a", "hang": -1, "reply": "x"}]},
    {"rules": [{"name": "", "reply": "x"}]},
    {"rules": [], "extra": 1},
]


@pytest.mark.parametrize("case", range(len(STUB_SCRIPTS)))
def test_a_stub_model_script_gets_the_same_verdict(case: int) -> None:
    schema = json.loads((ROOT / "schemas" / "stub-model.schema.json").read_text())
    data = STUB_SCRIPTS[case]
    want = not list(jsonschema.Draft202012Validator(schema).iter_errors(data))
    assert compile_schema(schema)(data) is want


EVENT_SCHEMA = json.loads((ROOT / "schemas" / "event.schema.json").read_text())


def _event() -> dict[str, Any]:
    return {
        "schema": 1, "seq": 3, "ts": "t", "run_id": "r", "leg": 1, "event": "node_passed",
        "node_id": "a", "verdict": "PASS", "provenance": "exit-only", "cost_usd": 0.5,
        "round": 1, "usage": {"input_tokens": 3}, "detail": "ok",
    }  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_mutated_event_gets_the_same_verdict(data: st.DataObject) -> None:
    """The event schema's if/then rules (a kind's required fields) are compiled, not skipped."""
    doc = _event()
    kinds = ["node_passed", "node_failed", "node_retried", "run_finished", "gate_approved"]
    doc["event"] = data.draw(st.sampled_from([*kinds, "run_started"]))
    for _ in range(data.draw(st.integers(0, 2))):
        path = data.draw(st.sampled_from([p for p in _paths(doc) if p]))
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(JSONISH | st.sampled_from(["FAIL", "retry", "passed"]))
        else:
            del parent[path[-1]]
    agree(EVENT_SCHEMA, doc)
    agree(EVENT_SCHEMA, _event())


REPLY_ROOT: dict[str, Any] = {
    "$defs": {"verdict": {"enum": ["ship", "fix"]}},
    "properties": {"v": {"$ref": "#/$defs/verdict"}, "odd": {"contentEncoding": "base64"}},
}


@pytest.mark.parametrize(
    ("part", "value", "answer"),
    [
        ({"$ref": "#/$defs/verdict"}, "ship", True),  # a part reading the root's $defs
        ({"$ref": "#/$defs/verdict"}, "maybe", False),
        ({"type": "integer"}, 3, True),
        ({"contentEncoding": "base64"}, "x", None),  # a keyword it does not know: no answer
    ],
)
def test_a_value_conforms_to_a_part_of_a_schema_or_the_compiled_check_gives_no_answer(
    part: dict[str, Any], value: Any, answer: bool | None
) -> None:
    assert conforms(part, value, REPLY_ROOT) is answer


@pytest.mark.parametrize("name", ["object", "array", "string", "boolean", "null", "integer",
                                  "number"])  # fmt: skip
def test_a_single_type_tested_alone_says_what_the_general_type_test_says(name: str) -> None:
    from omg.fastschema import _ONE_TYPE, _is_type

    for value in ({}, [], "", "1", True, False, None, 0, 1, -3, 1.0, 1.5, float("inf"), 2**70):
        assert _ONE_TYPE[name](value) == _is_type(value, name), (name, value)
