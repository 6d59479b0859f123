"""A resumed session that reports less than its parent had cost is priced at $0 — and the
anomaly is recorded on its execution and shown in the ledger, never swallowed."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import ScriptedClaude, of, omg_in_process, omg_run, write_graph

from omg.spend import Spend

HANDOFF = """
name: handoff
nodes:
  - id: impl
    prompt: Implement it.
  - id: child
    depends_on: [impl]
    handoff: session
    prompt: Now write the tests.
"""


def test_a_resumed_session_reporting_less_than_its_parent_is_an_anomaly_on_record(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    claude.replies([{"result": "DONE", "cost": 0.30}, {"result": "DONE", "total": 0.10}])
    g = write_graph(tmp_path, HANDOFF)
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    assert state["nodes"]["child"]["cost_usd"] == 0.0
    passed = of(r.events(), "node_passed", "child")[0]
    assert "reported $0.1000 in all, less than the $0.3000" in passed["cost_anomaly"]
    assert "cost_anomaly" not in of(r.events(), "node_passed", "impl")[0]

    shown = omg_in_process("status", "r1", "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    row = next(line for line in shown.stdout.splitlines() if line.startswith("child"))
    assert "cost anomaly: the resumed session reported $0.1000" in row
    assert "1 execution(s) with a cost anomaly, recorded as $0" in shown.stdout


@pytest.mark.parametrize(("reported", "cost", "anomaly"), [(0.5, 0.2, False), (0.1, 0.0, True)])
def test_a_resumed_spend_is_its_difference_or_an_anomaly(
    reported: float, cost: float, anomaly: bool
) -> None:
    spend = Spend(reported, session_cost_usd=reported).resumed(0.3)
    assert spend.cost_usd == pytest.approx(cost)
    assert bool(spend.anomaly) is anomaly
    assert Spend.of_event(spend.fields()) == spend
