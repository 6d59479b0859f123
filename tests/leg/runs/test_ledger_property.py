"""Property: for random looping graphs of agent nodes that spend, the ledger's execution rows
sum to the run total in state.json, and per node to each record's cost_usd."""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omg.graph.load import load_graph
from omg.ledgerrows import limits
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, resume_run, start_run
from omg.runners.claude import ClaudeRunner
from omg.runners.process import ProcResult, SpawnRequest
from omg.state.ledger import ledger
from omg.state.store import RunDir


class SpendingClaude:
    """Stands in for the claude process: each call answers OK or NO and reports a cost."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, req: SpawnRequest) -> ProcResult:
        ok = self.rng.random() < 0.6
        reply = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "OK done" if ok else "NO: more work",
            "session_id": f"s{self.rng.randrange(10**6)}",
            "total_cost_usd": round(self.rng.uniform(0.001, 0.5), 4),
        }
        return ProcResult(req.argv, 0, json.dumps(reply), "", 0.01)


@st.composite
def looping_graphs(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(2, 6))
    nodes: list[dict[str, Any]] = []
    for i in range(n):
        node: dict[str, Any] = {
            "id": f"n{i}",
            "prompt": f"step {i}",
            "success_check": {"exit_zero": True, "result_matches": "^OK"},
        }
        if i:  # a chain: a feedback body then never has a side exit
            node["depends_on"] = [f"n{i - 1}"]
        if draw(st.booleans()):
            node["retry"] = {"max": draw(st.integers(1, 2)), "on": ["result_mismatch"]}
        nodes.append(node)
    declarer = nodes[-1]
    ancestors = []
    cur: dict[str, Any] | None = declarer
    while cur is not None and cur.get("depends_on"):
        parent = cur["depends_on"][0]
        ancestors.append(parent)
        cur = next(x for x in nodes if x["id"] == parent)
    if ancestors:
        declarer.pop("retry", None)
        declarer["feedback"] = {
            "rerun": draw(st.sampled_from(ancestors)),
            "max": draw(st.integers(1, 3)),
        }
    return {"name": "spend", "on_fail": "continue", "nodes": nodes}


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=looping_graphs(), seed=st.integers(0, 10**6))
def test_the_ledger_rows_sum_to_the_state_totals(
    tmp_path_factory: Any, data: dict[str, Any], seed: int
) -> None:
    root = tmp_path_factory.mktemp("spend")
    path = root / "g.yaml"
    path.write_text(yaml.safe_dump(data))
    graph = load_graph(path)
    env = Environment(
        runs_dir=root / "runs",
        root=root,
        spawn=SpendingClaude(seed),
        agents={"claude": ClaudeRunner(binary=sys.executable)},
    )
    end = start_run(graph, path, {}, env, LegOptions(1), run_id="r")
    if end.result is not None and end.result.outcome == "failed":
        end = resume_run("r", env, LegOptions(1), retry_failed=True)
    state = end.state
    book = ledger(RunDir(root / "runs" / "r").read_events(), limits(graph))
    assert abs(book.total_usd - state["cost_usd"]) < 1e-9
    per_node: dict[str, float] = {}
    for row in book.rows:
        per_node[row.node_id] = per_node.get(row.node_id, 0.0) + row.cost_usd
    for nid, rec in state["nodes"].items():
        assert abs(per_node.get(nid, 0.0) - rec["cost_usd"]) < 1e-9, nid
    assert state["cost_usd"] > 0
