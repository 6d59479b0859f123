"""The published schemas accept every file omg accepts: an editor that checks a graph against
schemas/graph.schema.json, or a fragment against schemas/fragment.schema.json, never flags one
that `omg lint` passes — `use:` and `with:` included — and refuses what omg refuses alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mdpages import all_blocks

from omg.graph.lint import is_fragment, is_script, lint_files
from omg.graph.yamlpos import parse

ROOT = Path(__file__).resolve().parents[1]
GRAPH = Draft202012Validator(json.loads((ROOT / "schemas" / "graph.schema.json").read_text()))
FRAGMENT = Draft202012Validator(json.loads((ROOT / "schemas" / "fragment.schema.json").read_text()))
#: The graph, fragment and script examples of the README and the docs pages.
BLOCKS = {b.where: b.text for b in all_blocks("yaml") if "\njobs:" not in b.text}


def _files() -> list[Path]:
    """Every graph and fragment file omg accepts in the repository (stub-model scripts aside)."""
    found = [*(ROOT / "graphs").rglob("*.yaml"), *(ROOT / "tests" / "graphs" / "valid").glob("*")]
    found += (ROOT / "tests" / "graph" / "fragments" / "cases" / "valid").rglob("*.yaml")
    return sorted(
        p for p in found if p.suffix in (".yaml", ".yml") and not is_script(p.read_text())
    )


def _errors(checker: Draft202012Validator, data: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in checker.iter_errors(data)
    ]


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_graph_and_fragment_in_the_repository_validates_against_its_schema(
    path: Path,
) -> None:
    text = path.read_text()
    checker = FRAGMENT if is_fragment(text) else GRAPH
    assert not _errors(checker, parse(text).data), _errors(checker, parse(text).data)


@pytest.mark.parametrize("block", BLOCKS.values(), ids=BLOCKS.keys())
def test_every_yaml_example_in_the_pages_validates_against_its_schema(block: str) -> None:
    if is_script(block):
        return  # a stub-model script: checked by test_readme against its own schema
    checker = FRAGMENT if is_fragment(block) else GRAPH
    assert not _errors(checker, parse(block).data), _errors(checker, parse(block).data)


def test_the_published_graph_schema_refuses_what_a_use_may_not_carry(tmp_path: Path) -> None:
    for bad in (
        {"id": "a", "use": "f", "prompt": "p"},  # a whole prompt replaces what it is for
        {"id": "a", "run": "x", "with": {"k": 1}},  # with: binds only a use:
        {"id": "a", "use": "../f"},  # a bare name, never a path
    ):
        assert _errors(GRAPH, {"name": "g", "nodes": [bad]}), bad
    good = {"name": "g", "nodes": [{"id": "a", "use": "f", "with": {"k": [1]}, "timeout": "1m"}]}
    assert not _errors(GRAPH, good)
    (tmp_path / ".git").mkdir()
    (tmp_path / "g.yaml").write_text("name: g\nnodes:\n  - {id: a, use: f, timeout: never}\n")
    assert _errors(GRAPH, parse((tmp_path / "g.yaml").read_text()).data)
    [(_, found)] = lint_files([tmp_path / "g.yaml"])
    assert any(f.severity == "error" for f in found)


def test_omg_holds_a_resolved_graph_to_the_published_schema_without_use_and_with() -> None:
    """One file is the source: the schema omg checks a spliced graph or a snapshot against is
    the published one with the using-node branch and its two keys taken out."""
    from omg.graph.schema import AUTHORED, graph_schema, published_schema, schema_findings

    published, resolved = published_schema()["$defs"], graph_schema()["$defs"]
    assert set(published) - set(resolved) == {"useNode"}
    assert set(published["node"]["properties"]) - set(resolved["node"]["properties"]) == {*AUTHORED}
    data = {"name": "g", "nodes": [{"id": "a", "use": "f", "with": {"k": 1}}]}
    assert not _errors(GRAPH, data)
    said = {f.message.split(" — ")[0] for f in schema_findings(data, "g.yaml", None)}
    assert {'unknown key "use" in the node', 'unknown key "with" in the node'} <= said, said


def test_the_fragment_schema_refuses_a_key_no_graph_node_has() -> None:
    base = {"fragment": "f", "description": "d"}
    for body in (
        {**base, "node": {"run": "true", "colour": "blue"}},
        {**base, "exit": "a", "nodes": [{"id": "a", "run": "true", "timeot": "5m"}]},
    ):
        assert _errors(FRAGMENT, body), body


def test_a_fragment_node_takes_exactly_the_keys_of_a_graph_node() -> None:
    """The fragment schema lists a node's keys (an editor needs them in the file); this holds
    the list to the graph schema's, the one source."""
    graph_keys = set(GRAPH.schema["$defs"]["node"]["properties"])
    props = FRAGMENT.schema["properties"]
    assert set(props["node"]["properties"]) == graph_keys
    assert set(props["nodes"]["items"]["properties"]) == graph_keys
