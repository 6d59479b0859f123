"""A structured reply checked against its node's output_schema (omg.leg.structured), in process
through the test kit: a schema that cannot be applied to a reply fails the node, never the leg."""

from __future__ import annotations

from pathlib import Path

from kit import FakeRunner, of, run_graph

TREE = """\
name: tree
nodes:
  - id: a
    prompt: "nest"
    output_schema: {type: array, items: {$ref: "#"}}
"""


def test_a_reply_nested_past_what_the_check_can_follow_fails_its_node_not_the_leg(
    tmp_path: Path,
) -> None:
    deep = "[" * 600 + "]" * 600  # JSON omg reads; a check of it recurses past Python's limit
    fake = FakeRunner({"a": [deep]})
    ran = run_graph(tmp_path, TREE, runners={"claude": fake})
    assert ran.error is None and ran.outcome == "failed"
    failed = of(ran.events(), "node_failed")
    assert [e["cause"] for e in failed] == ["output_error"]
    assert "output_schema could not be applied to its reply" in failed[0]["detail"]
    assert len(fake.calls) == 1  # no correction turn: the reply is not what is wrong


def test_a_shallow_reply_to_the_same_schema_passes(tmp_path: Path) -> None:
    fake = FakeRunner({"a": ["[[], [[]]]"]})
    ran = run_graph(tmp_path, TREE, runners={"claude": fake})
    assert ran.outcome == "passed", ran.error
