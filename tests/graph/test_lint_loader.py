"""The loader API: check_file reports everything and never raises; load_graph raises one report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omg.errors import GraphError
from omg.graph.load import check_data, check_file, graph_from_snapshot, load_graph

CASES = Path(__file__).parents[1] / "graphs"
GOOD = "name: g\nnodes:\n  - id: a\n    run: echo hi\n"


def write(tmp_path: Path, text: str | bytes, name: str = "g.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_check_file_returns_the_graph_and_its_price_when_valid(tmp_path: Path) -> None:
    graph, found = check_file(write(tmp_path, GOOD))
    assert graph is not None and graph.ids == ("a",)
    assert [(f.severity, f.code) for f in found] == [("info", "worst-case")]


def test_check_file_reports_every_problem_at_once_each_with_a_line(tmp_path: Path) -> None:
    text = """\
name: many
concurrency: 0
on_fail: stop
nodes:
  - id: a
    run: echo
    colour: red
  - id: b
    prompt: hi
    run: echo
"""
    graph, found = check_file(write(tmp_path, text))
    assert graph is None
    assert [(f.line, f.code) for f in found] == [
        (2, "out-of-range"),
        (3, "not-allowed"),
        (7, "unknown-key"),
        (8, "node-kind"),
    ]


def test_check_file_reports_duplicate_keys_together_with_schema_errors(tmp_path: Path) -> None:
    text = "name: g\nname: h\nnodes:\n  - id: a\n    run: echo\n    colour: red\n"
    graph, found = check_file(write(tmp_path, text))
    assert graph is None
    assert [f.code for f in found] == ["duplicate-key", "unknown-key"]


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"name: caf\xe9\n", "not-utf8"),
        (b"", "empty"),
        (b"# only a comment\n", "empty"),
        (b"- a\n- b\n", "not-a-mapping"),
        (b"just text\n", "not-a-mapping"),
        (b"name: [\n", "yaml-syntax"),
    ],
)
def test_check_file_turns_unusable_content_into_one_finding(
    tmp_path: Path, content: bytes, code: str
) -> None:
    graph, found = check_file(write(tmp_path, content))
    assert graph is None
    assert [f.code for f in found] == [code]
    assert found[0].line is not None


def test_check_file_accepts_a_utf8_byte_order_mark(tmp_path: Path) -> None:
    graph, _ = check_file(write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode()))
    assert graph is not None


def test_check_file_never_raises_for_an_unreadable_path(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.yaml", tmp_path):
        graph, found = check_file(path)
        assert graph is None
        assert [f.code for f in found] == ["unreadable"]
        assert "cannot read the file" in found[0].message


def test_load_graph_raises_one_report_listing_every_error(tmp_path: Path) -> None:
    path = write(
        tmp_path, "name: g\nconcurrency: 0\nnodes:\n  - id: a\n    run: x\n    timeout: 0s\n"
    )
    with pytest.raises(GraphError) as err:
        load_graph(path)
    lines = str(err.value).splitlines()
    assert lines[0].startswith(f"{path}:2: error: concurrency: 0 must be at least 1")
    assert len(lines) == 2
    assert lines[-1] == f"1 error(s) in {path}; fix them and run `omg lint {path}`"
    assert err.value.kind == "refused"


def test_load_graph_names_the_node_and_line_of_a_semantic_error(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD + "  - id: b\n    run: echo\n    depends_on: [c]\n")
    with pytest.raises(GraphError, match=rf'{path}:7: error: node "b": depends_on names unknown'):
        load_graph(path)


def test_load_graph_returns_the_graph_despite_advisories() -> None:
    graph = load_graph(CASES / "valid" / "no_tool_grant.yaml")
    assert graph.ids == ("write",)


def test_graph_from_snapshot_accepts_what_a_run_stored() -> None:
    graph = load_graph(CASES / "valid" / "review_loop.yaml")
    stored = json.loads(json.dumps(dict(graph.data)))
    again = graph_from_snapshot(stored, "graphs/review-loop.yaml")
    assert again == graph


def test_graph_from_snapshot_refuses_a_damaged_graph_with_every_reason() -> None:
    data = {"name": "g", "nodes": [{"id": "a", "run": "x", "depends_on": ["a"]}, {"id": "b"}]}
    with pytest.raises(GraphError) as err:
        graph_from_snapshot(data, "graphs/g.yaml")
    text = str(err.value)
    assert 'node "b": declares no kind' in text
    assert "in the graph this run snapshotted from graphs/g.yaml" in text
    data["nodes"] = data["nodes"][:1]
    with pytest.raises(GraphError, match="depends_on names the node itself"):
        graph_from_snapshot(data, "graphs/g.yaml")


def test_check_data_without_positions_still_names_the_node() -> None:
    graph, found = check_data(
        {"name": "g", "nodes": [{"id": "a", "run": "x", "timeout": "0s"}]}, "s"
    )
    assert graph is None
    (f,) = found
    assert (f.file, f.line, f.node, f.code) == ("s", None, "a", "bad-duration")
    assert f.path == "$.nodes[0].timeout"
