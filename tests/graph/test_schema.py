"""The graph JSON Schema: shipped twice identically, valid, documented, and read by the model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from omg.graph.build import graph_from_data, node_from_data
from omg.graph.schema import graph_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "graph.schema.json"
PACKAGED = ROOT / "omg" / "schemas" / "graph.schema.json"


def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def properties(node: Any, where: str = "$") -> Iterator[tuple[str, Any]]:
    """Every (location, property schema) in the schema, however deeply nested."""
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            yield f"{where}.{name}", sub
        for key, sub in node.items():
            yield from properties(sub, f"{where}/{key}")
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            yield from properties(sub, f"{where}[{i}]")


def test_schema_the_packaged_copy_is_byte_identical() -> None:
    assert SCHEMA.read_bytes() == PACKAGED.read_bytes()


def test_schema_is_a_valid_draft_2020_12_schema_with_an_id() -> None:
    doc = schema()
    Draft202012Validator.check_schema(doc)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["$id"].endswith("/graph.schema.json")


def test_schema_every_property_has_a_title_and_description() -> None:
    doc = schema()
    missing = []
    for where, sub in properties(doc):
        if sub is False:  # a kind branch forbidding a key
            continue
        target = sub
        if "$ref" in sub and "description" not in sub:
            target = doc["$defs"][sub["$ref"].rsplit("/", 1)[-1]]
        if not target.get("description") or not target.get("title"):
            missing.append(where)
    assert not missing, f"undocumented properties: {missing}"


def test_schema_refuses_unknown_keys_everywhere() -> None:
    open_objects = [
        where
        for where, sub in properties(schema())
        if isinstance(sub, dict)
        and sub.get("type") == "object"
        and "additionalProperties" not in sub
    ]
    for name, sub in schema()["$defs"].items():
        if sub.get("type") == "object" and sub.get("additionalProperties") is not False:
            open_objects.append(name)
    assert not open_objects


def test_schema_kind_branches_only_forbid_keys_a_node_has() -> None:
    defs = schema()["$defs"]
    node_keys = set(defs["node"]["properties"])
    for branch in ("agentNode", "shellNode", "gateNode"):
        forbidden = {k for k, v in defs[branch]["properties"].items() if v is False}
        assert forbidden <= node_keys, branch


BASE_NODE = {"id": "a", "prompt": "p"}
NODE_SAMPLES: dict[str, Any] = {
    "depends_on": ["b"],
    "description": "what",
    "budget_tokens": 5000,
    "prompt": "other",
    "runtime": "codex",
    "agent": "reviewer",
    "model": "opus",
    "allowed_tools": ["Read"],
    "permission_mode": "plan",
    "handoff": "session",
    "cwd": "sub",
    "worktree": {"name": "lane", "branch": "main", "push": True},
    "env": {"A": "1"},
    "success_check": {"exit_zero": True},
    "retry": {"max": 1, "on": ["timeout"], "backoff": {"initial": "2s"}},
    "feedback": {"rerun": "b", "max": 2, "on_exhausted": "gate", "stop_on_no_progress": False},
    "timeout": "5m",
    "idle_timeout": "90s",
    "budget_usd": 1.5,
    "max_turns": 30,
    "project_settings": True,
    "output_schema": {"type": "object"},
}


@pytest.mark.parametrize("key", sorted(graph_schema()["$defs"]["node"]["properties"]))
def test_schema_every_node_field_is_read_by_the_model(key: str) -> None:
    """Every key of a resolved node (use: and with: are spliced away before the model)."""
    if key in ("id", "type", "run"):
        changed = {
            "id": {"id": "z", "prompt": "p"},
            "type": {"id": "a", "type": "gate"},
            "run": {"id": "a", "run": "make"},
        }[key]
    else:
        changed = {**BASE_NODE, key: NODE_SAMPLES[key]}
    assert node_from_data(changed) != node_from_data(BASE_NODE), f"the model ignores {key}"


#: Informational fields: kept in the run's snapshot (graph data), never read by the engine.
#: read by the loader (where fragments are, what they hashed to), not by the model
INFORMATIONAL = {"version", "fragments", "resolved_from"}


@pytest.mark.parametrize("key", sorted(set(schema()["properties"]) - INFORMATIONAL))
def test_schema_every_graph_field_is_read_by_the_model(key: str) -> None:
    base = {"name": "g", "nodes": [BASE_NODE]}
    samples = {
        "name": "h",
        "inputs": ["x"],
        "concurrency": 9,
        "on_fail": "continue",
        "budget_usd": 4.0,
        "pr_budget_usd": 20.0,
        "day_budget_usd": 50.0,
        "max_hops": 3,
        "approvers": ["octocat"],
        "secrets": ["DEPLOY_URL"],
        "prices": {"default": {"input": 1, "output": 2}},
        "nodes": [{"id": "b", "run": "x"}],
    }
    assert graph_from_data({**base, key: samples[key]}) != graph_from_data(base)


def test_schema_closed_sets_match_the_model() -> None:
    """Retry causes and permission modes are spelled once in the model; the schema must agree."""
    from omg.graph.model import PERMISSION_MODES
    from omg.kinds import CAUSES

    defs = schema()["$defs"]
    assert defs["retry"]["properties"]["on"]["items"]["enum"] == list(CAUSES)
    modes = (
        defs["agentNode"]["properties"].get("permission_mode")
        or defs["node"]["properties"]["permission_mode"]
    )
    assert modes["enum"] == list(PERMISSION_MODES)


def test_the_packaged_schemas_are_the_published_ones() -> None:
    """omg/schemas/ (what an installed omg reads) is byte for byte schemas/ (what users see)."""
    root = Path(__file__).resolve().parents[2]
    published = sorted(p.name for p in (root / "schemas").glob("*.json"))
    packaged = sorted(p.name for p in (root / "omg" / "schemas").glob("*.json"))
    assert published == packaged
    for name in published:
        assert (root / "schemas" / name).read_bytes() == (
            root / "omg" / "schemas" / name
        ).read_bytes(), name


#: name → a word of the reason a graph may not set it (each class of the refused names).
REFUSED_ENV = {
    "HOME": "a HOME (the XDG", "TMPDIR": "a TMPDIR", "XDG_CONFIG_HOME": "the XDG directories",
    "CLAUDE_CONFIG_DIR": "configuration home", "CODEX_HOME": "configuration home",
    "PATH": "programs a command line runs", "SHELL": "the shell",
    "CLAUDE_ENV_FILE": "before each", "LD_PRELOAD": "dynamic loader", "DYLD_INSERT_LIBRARIES":
    "dynamic loader", "PYTHONPATH": "interpreter", "NODE_OPTIONS": "interpreter",
    "PERL5OPT": "interpreter", "RUBYOPT": "interpreter", "JAVA_TOOL_OPTIONS": "interpreter",
    "BASH_ENV": "sh or bash", "ENV": "sh or bash", "PS4": "set -x", "IFS": "re-splits",
    "PROMPT_COMMAND": "sh or bash", "SHELLOPTS": "sh or bash", "GIT_CONFIG_COUNT": "git",
    "GIT_CONFIG_GLOBAL": "git", "GIT_EXEC_PATH": "git", "GIT_SSH_COMMAND": "git",
    "GIT_DIR": "another repository", "PAGER": "other programs", "LESSOPEN": "other programs",
}  # fmt: skip
#: Names a graph may set: data, a tool's own settings, a build's choices.
ALLOWED_ENV = ["LOG_LEVEL", "IS_SANDBOX", "GOPROXY", "JAVA_HOME", "CC", "GIT_AUTHOR_NAME",
               "ANTHROPIC_MODEL", "OPENAI_ORG_ID", "HOMEBREW_NO_AUTO_UPDATE", "MYPATH"]  # fmt: skip


def _env_findings(env: str) -> list[Any]:
    from omg.graph.schema import schema_findings
    from omg.graph.yamlpos import parse

    text = f"name: g\nnodes:\n  - id: a\n    run: make\n    env: {env}\n"
    parsed = parse(text)
    return schema_findings(parsed.data, "g.yaml", parsed.positions)


@pytest.mark.parametrize(("name", "why"), sorted(REFUSED_ENV.items()))
def test_schema_refuses_env_names_that_move_a_room_or_start_code(name: str, why: str) -> None:
    for env in (f"{{{name}: x}}", f"[{name}]", f"{{{name}: null}}"):
        (f,) = _env_findings(env)
        assert (f.code, f.line, f.node) == ("env-refused", 5, "a"), f
        assert f.message.startswith(f'env: "{name}" may not be set by a graph — ')
        assert why in f.message, f.message


def test_schema_lets_a_graph_set_every_other_name() -> None:
    assert _env_findings("{" + ", ".join(f"{n}: x" for n in ALLOWED_ENV) + "}") == []


def test_every_runtimes_room_variables_are_refused_in_env() -> None:
    from omg.runners.registry import agents

    for runner in agents().values():
        for name in runner.room_env:
            assert [f.code for f in _env_findings(f"[{name}]")] == ["env-refused"], name
