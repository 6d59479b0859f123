"""The findings table of the sticky comment and step summary: each structured loop's latest
findings, a column per field, every value inert."""

from __future__ import annotations

from gfm import HOSTILE, read

from omg.ci.findingtable import latest, markdown, report
from omg.graph.build import graph_from_data

GRAPH = graph_from_data(
    {
        "name": "g",
        "nodes": [
            {"id": "impl", "prompt": "p"},
            {
                "id": "review",
                "prompt": "p",
                "depends_on": ["impl"],
                "output_schema": {"type": "object"},
                "feedback": {"rerun": "impl", "max": 2, "findings": "findings"},
            },
        ],
    }
)


def test_a_loops_latest_findings_become_a_table_with_a_column_per_field() -> None:
    found = [{"file": "a.py", "line": 3, "severity": "major", "problem": "no test"}]
    nodes = {"review": {"round": 1, "output": {"verdict": "fix", "findings": found}}}
    text = report(GRAPH, nodes)
    assert "| `file` | `line` | `severity` | `problem` |" in text
    assert "| `a.py` | `3` | `major` | `no test` |" in text
    assert "round 1" in text


def test_no_findings_no_table() -> None:
    nodes = {"review": {"output": {"verdict": "ship", "findings": []}}, "impl": {}}
    assert report(GRAPH, nodes) == ""
    assert latest(GRAPH, {"review": {"verdict": "FAIL"}}) == []


def test_a_hostile_finding_stays_inert_text() -> None:
    hostile = [h for h in HOSTILE if "\x00" not in h][:20]
    found = [{"file": h, "pro|blem </td>": h} for h in hostile]
    page = read(report(GRAPH, {"review": {"output": {"findings": found}}}))
    assert set(page.tags) <= {"p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td"}
    assert page.tags.count("tr") == 1 + len(found)  # no row forged, none lost
    assert not page.comments


def test_past_the_row_cap_the_rest_are_counted() -> None:
    from omg.ci.findingtable import Findings

    text = markdown([Findings("review", 0, tuple(f"f{i}" for i in range(25)))], rows=20)
    assert "| `finding` |" in text and "_5 more:" in text
