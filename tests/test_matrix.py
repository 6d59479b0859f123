"""The fan-out plan: ready nodes as matrix entries, never splitting a lane or a session handoff,
within the graph's concurrency and --max-jobs; gates and held nodes named, not planned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from omg.graph.build import graph_from_data
from omg.graph.load import load_graph
from omg.matrix import GITHUB_MATRIX_LIMIT, plan


def graph(text: str) -> Any:
    return graph_from_data(yaml.safe_load(text))


def passed(*ids: str) -> dict[str, dict[str, Any]]:
    return {i: {"verdict": "PASS", "round": 0, "attempts": 1, "cost_usd": 0.0} for i in ids}


FAN = "name: f\nconcurrency: 20\nnodes:\n  - {id: root, run: 'true'}\n" + "".join(
    f"  - {{id: t{i:02d}, depends_on: [root], run: 'true'}}\n" for i in range(12)
)


def test_independent_ready_nodes_are_one_entry_each_in_graph_order() -> None:
    g = graph(FAN)
    assert [e.node for e in plan(g, {}).entries] == ["root"]
    p = plan(g, passed("root"))
    assert [e.nodes for e in p.entries] == [(f"t{i:02d}",) for i in range(12)]
    assert p.include()["include"][0] == {"node": "t00", "nodes": "t00"}


def test_the_concurrency_and_max_jobs_cap_the_wave_and_the_rest_is_held() -> None:
    g = graph(FAN.replace("concurrency: 20", "concurrency: 5"))
    p = plan(g, passed("root"))
    assert len(p.entries) == 5 and p.held == tuple(f"t{i:02d}" for i in range(5, 12))
    assert len(plan(g, passed("root"), max_jobs=2).entries) == 2


def test_nodes_sharing_a_lane_run_as_one_entry() -> None:
    g = graph("""\
name: l
concurrency: 8
nodes:
  - {id: a, run: 'true', worktree: lane}
  - {id: b, run: 'true', worktree: lane}
  - {id: c, run: 'true', worktree: other}
  - {id: d, run: 'true'}
""")
    entries = plan(g, {}).entries
    assert [(e.node, e.nodes, e.lane) for e in entries] == [
        ("a", ("a", "b"), "lane"),
        ("c", ("c",), "other"),
        ("d", ("d",), None),
    ]


def test_a_session_handoff_chain_joins_its_parents_entry() -> None:
    g = graph("""\
name: s
concurrency: 8
nodes:
  - {id: plan, prompt: p, allowed_tools: []}
  - {id: impl, prompt: i, depends_on: [plan], handoff: session, allowed_tools: []}
  - {id: polish, prompt: o, depends_on: [impl], handoff: session, allowed_tools: []}
  - {id: solo, prompt: s, allowed_tools: []}
""")
    entries = plan(g, {}).entries
    assert [e.nodes for e in entries] == [("plan", "impl", "polish"), ("solo",)]


def test_a_ready_gate_is_named_not_planned_and_a_finished_run_plans_nothing() -> None:
    g = graph(
        "name: g\nnodes:\n  - {id: a, run: 'true'}\n  - {id: ok, type: gate, depends_on: [a]}\n"
    )
    p = plan(g, passed("a"))
    assert p.entries == () and p.gates == ("ok",) and p.include() == {"include": []}
    assert plan(g, {**passed("a"), "ok": {"verdict": "PASS", "round": 0}}).entries == ()


def test_no_wave_is_larger_than_a_github_matrix() -> None:
    many = "name: m\nconcurrency: 999\nnodes:\n" + "".join(
        f"  - {{id: n{i}, run: 'true'}}\n" for i in range(300)
    )
    p = plan(graph(many), {})
    assert len(p.entries) == GITHUB_MATRIX_LIMIT and len(p.held) == 300 - GITHUB_MATRIX_LIMIT


def test_the_shipped_fanout_graph_plans_its_reviews_and_checks_as_one_wave() -> None:
    graph = load_graph(Path(__file__).parents[1] / "graphs" / "fanout.yaml")
    wave = plan(graph, {})
    assert len(wave.entries) == 10 and "triage" not in [e.node for e in wave.entries]
    assert wave.held == () and wave.gates == ()


def test_a_failure_under_on_fail_halt_plans_nothing_more_and_continue_plans_the_rest() -> None:
    failed = {**passed("root"), "t00": {"verdict": "FAIL", "round": 0, "attempts": 1}}
    halting = graph(FAN + "on_fail: halt\n")
    assert plan(halting, failed).entries == ()
    going_on = graph(FAN + "on_fail: continue\n")
    assert [e.node for e in plan(going_on, failed).entries] == [f"t{i:02d}" for i in range(1, 12)]
