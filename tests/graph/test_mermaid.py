"""Mermaid rendering: shapes per kind, depends_on arrows, dashed feedback arcs, status colours."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from gfm import HOSTILE
from kit import omg_in_process

from omg.graph.build import graph_from_data
from omg.graph.mermaid import BANDS, MAX_EDGES, MAX_TEXT, escape, render_grouped, render_mermaid
from omg.graph.model import Graph

NODES: list[dict[str, Any]] = [
    {"id": "impl.v2", "prompt": "p"},
    {"id": "test-all", "run": "make test", "depends_on": ["impl.v2"]},
    {
        "id": "review",
        "prompt": "r",
        "depends_on": ["test-all"],
        "feedback": {"rerun": "impl.v2", "max": 2, "on_exhausted": "gate"},
    },
    {"id": "approve", "type": "gate", "depends_on": ["review"]},
]


def graph() -> Graph:
    return graph_from_data({"name": "g", "nodes": NODES})


def test_mermaid_draws_each_kind_with_its_own_shape() -> None:
    lines = render_mermaid(graph()).splitlines()
    assert lines[0] == "flowchart TD"
    assert '  n0["impl.v2<br/>(agent)"]' in lines
    assert '  n1[["test-all<br/>(shell)"]]' in lines
    assert '  n3{{"approve<br/>(gate)"}}' in lines


def test_mermaid_draws_depends_on_as_arrows_and_arcs_as_dashed_back_edges() -> None:
    lines = render_mermaid(graph()).splitlines()
    assert {"  n0 --> n1", "  n1 --> n2", "  n2 --> n3"} <= set(lines)
    assert '  n2 -. "max 2" .-> n0' in lines
    assert '  x0{{"review.exhausted<br/>(gate)"}}' in lines
    assert '  n2 -. "exhausted" .-> x0' in lines


def test_mermaid_without_status_adds_no_styles() -> None:
    assert "classDef" not in render_mermaid(graph())


def test_mermaid_colours_nodes_by_status_and_missing_ones_as_pending() -> None:
    out = render_mermaid(
        graph(),
        {"impl.v2": "passed", "test-all": "failed", "review": "odd", "review.exhausted": "paused"},
    )
    lines = out.splitlines()
    for name in ("passed", "failed", "running", "paused", "pending"):
        assert any(line.startswith(f"  classDef {name} fill:") for line in lines), name
    assert "  class n0 passed" in lines
    assert "  class n1 failed" in lines
    assert "  class n2,n3 pending" in lines
    assert "  class x0 paused" in lines


def test_mermaid_escapes_characters_its_parser_reads() -> None:
    assert escape('say "hi" <b> & bye\nnow') == "say #quot;hi#quot; #lt;b#gt; #amp; bye now"


ENTITY = {"35": "#", "96": "`", "amp": "&", "quot": '"', "lt": "<", "gt": ">"}


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_a_label_keeps_no_character_mermaid_or_markdown_would_read(text: str) -> None:
    out = escape(text)
    assert not set(out) & set('"<>`&\r\n')  # no quote ends it, no tag, no Markdown label
    assert re.fullmatch(r"(?:[^#]|#(?:35|96|amp|quot|lt|gt);)*", out)  # each # is omg's code
    decoded = re.sub(r"#(\w+);", lambda m: ENTITY[m.group(1)], out)
    assert decoded == re.sub(r"\r\n|\r|\n", " ", text)  # and shows as the text itself


def _edges(text: str) -> int:
    """The edges a diagram draws (each on a line of its own)."""
    return sum(1 for line in text.splitlines() if "-->" in line or ".->" in line)


def _big(sources: int, sinks: int, *, chain: int = 0, loops: int = 0) -> dict[str, Any]:
    """``sources`` × ``sinks`` depends_on edges, a chain of ``chain`` more, ``loops`` arcs."""
    nodes: list[dict[str, Any]] = [{"id": f"s{i}", "run": "true"} for i in range(sources)]
    every = [f"s{i}" for i in range(sources)]
    nodes += [{"id": f"t{j}", "run": "true", "depends_on": every} for j in range(sinks)]
    nodes += [
        {"id": f"c{k}", "run": "true", "depends_on": [f"c{k - 1}" if k else "t0"]}
        for k in range(chain)
    ]
    for a in range(loops):  # a loop of its own: impl → review, review's arc back to impl
        fb = {"rerun": f"i{a}", "max": 1}
        nodes.append({"id": f"i{a}", "run": "echo {{ feedback.r" + str(a) + " }}"})
        nodes.append({"id": f"r{a}", "run": "true", "depends_on": [f"i{a}"], "feedback": fb})
    return {"name": "g", "nodes": nodes}


def _omg_graph(tmp_path: Path, data: dict[str, Any], *args: str) -> tuple[str, str]:
    path = tmp_path / "g.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    done = omg_in_process("graph", str(path), *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def test_omg_graph_prints_the_whole_diagram_while_mermaid_draws_it(tmp_path: Path) -> None:
    out, err = _omg_graph(tmp_path, _big(25, 20))  # 500 edges: Mermaid's default maxEdges
    assert out == render_mermaid(graph_from_data(_big(25, 20))) and err == ""
    assert _edges(out) == MAX_EDGES


def test_omg_graph_past_500_edges_prints_a_grouped_diagram_and_says_why(tmp_path: Path) -> None:
    data = _big(25, 20, chain=3, loops=2)  # 500 + 3 + 2 × 2 edges
    out, err = _omg_graph(tmp_path, data)
    assert out.startswith("flowchart TD\n") and _edges(out) <= MAX_EDGES
    boxes = [line for line in out.splitlines() if line.startswith("  b") and '["' in line]
    counted = sum(int(re.search(r": (\d+) node\(s\)", b).group(1)) for b in boxes)  # type: ignore[union-attr]
    assert counted == len(data["nodes"])  # every node is in one box
    assert '  b0 -- "502 edge(s)" --> b1' in out  # s* → t* and i* → r*, counted
    assert '  b1 -. "2 feedback arc(s)" .-> b0' in out  # the loops' arcs, r* → i*
    assert "depth 0: 27 node(s), 27 shell<br/>s0, s1, s2, s3, s4, s5 … and 21 more" in out
    # why the whole diagram would not render, and what to do
    assert "507 edges" in err and "at most 500 edges" in err and "secure" in err
    assert "omg graph --full" in err and "maxEdges" in err
    full, quiet = _omg_graph(tmp_path, data, "--full")
    assert full == render_mermaid(graph_from_data(data)) and quiet == ""
    assert _edges(full) == 507


def test_a_long_chain_is_grouped_into_bands_of_depths_mermaid_draws() -> None:
    data = _big(25, 20, chain=700, loops=3)  # 702 depths
    text = render_grouped(graph_from_data(data))
    boxes = [line for line in text.splitlines() if line.startswith("  b") and '["' in line]
    assert len(boxes) == BANDS and _edges(text) <= MAX_EDGES and len(text) <= MAX_TEXT
    assert boxes[0].startswith('  b0["depth 0–31: 81 node(s), 81 shell<br/>s0, s1,')
    assert boxes[-1].startswith(f'  b{BANDS - 1}["depth 671–701: ')


def test_a_diagram_past_50000_characters_is_grouped_too(tmp_path: Path) -> None:
    nodes = [{"id": f"{i:03d}" + "x" * 97, "run": "true"} for i in range(450)]  # ids of 100
    data = {"name": "g", "nodes": nodes}
    assert len(render_mermaid(graph_from_data(data))) > MAX_TEXT
    out, err = _omg_graph(tmp_path, data)
    assert len(out) <= MAX_TEXT and "0 edges" in err and "50,000 characters" in err
