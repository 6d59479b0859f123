"""Mermaid rendering: shapes per kind, depends_on arrows, dashed feedback arcs, status colours."""

from __future__ import annotations

import re
from typing import Any

import pytest
from gfm import HOSTILE

from omg.graph.build import graph_from_data
from omg.graph.mermaid import escape, render_mermaid
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
