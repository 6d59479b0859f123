"""`omg resume RUN --dry-run`: the next leg's argv as it would run — the run budget it hands an
agent is what is left of it, not the whole — and nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

from kit import ScriptedClaude, omg_in_process, omg_run, write_graph

GRAPH = """
name: budgeted
budget_usd: 5
nodes:
  - id: impl
    prompt: Implement it.
  - id: check
    depends_on: [impl]
    type: gate
  - id: docs
    depends_on: [check]
    prompt: Write the docs.
"""


def test_a_dry_resume_hands_the_next_agent_what_is_left_of_the_run_budget(
    tmp_path: Path, omg, claude: ScriptedClaude
) -> None:
    claude.replies([{"result": "DONE", "cost": 1.25}])
    g = write_graph(tmp_path, GRAPH)
    fresh = omg_in_process("run", str(g), "--dry-run", cwd=tmp_path, env=claude.env())
    assert fresh.returncode == 0, fresh.stderr
    assert "--max-budget-usd 5.0" in fresh.stdout  # nothing spent yet: all of it
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 4, r.explain()  # paused at the gate

    runs = str(tmp_path / "runs")
    shown = omg_in_process(
        "resume", "r1", "--dry-run", "--runs-dir", runs, cwd=tmp_path, env=claude.env()
    )
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    docs = out[out.index("- docs [agent]") :]
    assert "--max-budget-usd 3.75" in docs.splitlines()[1]
    assert "--max-budget-usd 5" not in out
    assert "passed: not run again" in out[out.index("- impl") :].splitlines()[1]
    assert "run budget $5.00: $1.2500 spent, $3.7500 left" in out
    assert len(claude.calls()) == 1  # nothing ran
    state = json.loads((tmp_path / "runs" / "r1" / "state.json").read_text())
    assert len(state["legs"]) == 1
