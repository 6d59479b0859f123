"""The runtime declarations (``omg/runtimes.py``): every runtime a graph may name has rules, and
what each declares is what load and lint do to its nodes — a key it refuses is refused with
its fix, one it takes is taken, a dollar budget it cannot price is warned about, a subagent is
looked up where it says."""

from __future__ import annotations

from typing import Any

import pytest

from omg.graph.advise import advise
from omg.graph.build import graph_from_data
from omg.graph.validate import validate
from omg.runtimes import RULES, RUNTIMES, Refusal

#: A value for each key some runtime refuses, to set on a node.
SAMPLES: dict[str, Any] = {"agent": "reviewer", "allowed_tools": ["Read"], "max_turns": 3}
REFUSALS = [(name, r) for name, rules in RULES.items() for r in rules.refuses]


def node_findings(runtime: str, check: str = "validate", **fields: Any) -> dict[str, str]:
    """The findings (code → message) of a one-node graph of ``runtime`` with ``fields``."""
    node = {"id": "a", "prompt": "p", "runtime": runtime, **fields}
    graph = graph_from_data({"name": "g", "nodes": [node]})
    found = validate(graph, "g.yaml") if check == "validate" else advise(graph, "g.yaml")
    return {f.code: f.message for f in found}


def test_every_runtime_a_graph_may_name_has_its_rules() -> None:
    assert list(RULES) == list(RUNTIMES)
    assert {r.key for _, r in REFUSALS} <= set(SAMPLES), "a refused key with no sample"


@pytest.mark.parametrize(("runtime", "refusal"), REFUSALS, ids=lambda v: getattr(v, "key", v))
def test_a_key_a_runtime_refuses_is_refused_with_its_fix(runtime: str, refusal: Refusal) -> None:
    found = node_findings(runtime, **{refusal.key: SAMPLES[refusal.key]})
    assert found == {f"{runtime}-field": f"runtime: {runtime} with {refusal.fix}"}


@pytest.mark.parametrize("runtime", list(RULES))
def test_a_key_a_runtime_takes_is_not_refused(runtime: str) -> None:
    for key, value in SAMPLES.items():
        if RULES[runtime].takes(key):
            assert node_findings(runtime, **{key: value}) == {}, key


@pytest.mark.parametrize("runtime", list(RULES))
def test_a_dollar_budget_is_warned_about_only_where_the_runtime_reports_tokens(
    runtime: str,
) -> None:
    found = node_findings(runtime, "advise", budget_usd=2)
    if RULES[runtime].prices_tokens:
        assert f"this {runtime} node: {runtime} reports tokens" in found["unpriced-budget"]
    else:
        assert "unpriced-budget" not in found


@pytest.mark.parametrize("runtime", [name for name, r in RULES.items() if r.subagents])
def test_a_subagent_is_looked_up_where_its_runtime_says(runtime: str) -> None:
    sub = RULES[runtime].subagents
    assert sub is not None
    mine = node_findings(runtime, "advise", agent="reviewer", allowed_tools=[])
    assert (
        f"looked up in the checkout's {sub.folder}, which {runtime} reads"
        in (mine["agent-needs-project"])
    )
    built_in = node_findings(runtime, "advise", agent=min(sub.built_in), allowed_tools=[])
    assert "agent-needs-project" not in built_in


def test_project_settings_names_what_each_runtime_loads() -> None:
    said = node_findings("claude", "advise", project_settings=True, allowed_tools=[])
    for name, rules in RULES.items():
        assert f"{name}: {rules.project_files}" in said["project-settings"]
