"""The validator on models built directly: rules the schema shields files from still hold."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from omg.graph.build import graph_from_data
from omg.graph.model import Feedback, Graph, Retry
from omg.graph.validate import validate


def graph(*nodes: dict[str, Any], **fields: Any) -> Graph:
    return graph_from_data({"name": "g", "nodes": list(nodes), **fields})


def codes(g: Graph) -> list[str]:
    return [f.code for f in validate(g, "g.yaml")]


def test_validate_a_valid_graph_has_no_findings() -> None:
    g = graph({"id": "a", "run": "x"}, {"id": "b", "run": "y", "depends_on": ["a"]})
    assert validate(g, "g.yaml") == []


def test_validate_refuses_a_kind_its_fields_contradict() -> None:
    g = graph({"id": "a", "timeout": "1m"})  # no prompt, no run, no type: read as an agent
    assert codes(g) == ["node-kind"]
    assert "an agent node needs prompt: and no run:" in validate(g, "g.yaml")[0].message


def test_validate_refuses_a_feedback_max_below_one() -> None:
    g = graph({"id": "a", "run": "x"}, {"id": "b", "run": "y", "depends_on": ["a"]})
    b = replace(g.nodes[1], feedback=Feedback(rerun="a", max=0))
    (f,) = validate(replace(g, nodes=(g.nodes[0], b)), "g.yaml")
    assert f.code == "feedback-max" and "there is no default" in f.message


def test_validate_refuses_negative_retries_and_unknown_causes() -> None:
    g = graph({"id": "a", "run": "x"})
    bad = replace(g.nodes[0], retry=Retry(max=-1, on=("sometimes",)))  # type: ignore[arg-type]
    assert codes(replace(g, nodes=(bad,))) == ["retry-max", "retry-cause"]


def test_validate_refuses_session_handoff_on_a_shell_node() -> None:
    g = graph(
        {"id": "a", "prompt": "p"},
        {"id": "b", "run": "y", "depends_on": ["a"], "handoff": "session"},
    )
    assert codes(g) == ["handoff-session"]


def test_validate_refuses_a_budget_that_is_not_finite() -> None:
    g = graph({"id": "a", "prompt": "p", "budget_usd": float("inf")}, budget_usd=float("nan"))
    assert sorted(codes(g)) == ["bad-budget", "bad-budget"]


def test_validate_reports_one_cycle_per_tangle_not_per_edge() -> None:
    g = graph(
        {"id": "a", "run": "x", "depends_on": ["b"]},
        {"id": "b", "run": "x", "depends_on": ["a", "c"]},
        {"id": "c", "run": "x", "depends_on": ["b"]},
        {"id": "d", "run": "x", "depends_on": ["e"]},
        {"id": "e", "run": "x", "depends_on": ["d"]},
    )
    found = validate(g, "g.yaml")
    assert [f.code for f in found] == ["cycle", "cycle"]
    assert "dependency cycle a → b → a" in found[0].message
    assert "dependency cycle d → e → d" in found[1].message


def test_validate_checks_every_arc_even_when_another_is_broken() -> None:
    g = graph(
        {"id": "a", "run": "x"},
        {"id": "b", "run": "x", "depends_on": ["a"], "feedback": {"rerun": "zz", "max": 1}},
        {"id": "c", "run": "x", "depends_on": ["b"]},
        {"id": "d", "run": "x", "depends_on": ["c"], "feedback": {"rerun": "d", "max": 1}},
    )
    assert codes(g) == ["feedback-target", "feedback-target"]
