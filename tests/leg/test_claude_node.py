"""Agent nodes through the claude runtime, with a scripted claude standing in for the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit import ScriptedClaude, clean_env, of, omg_run, write_graph


def _flag(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_an_agent_node_runs_claude_and_records_the_reply(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    claude.replies(
        [
            {"result": "**DONE** — implemented `greet`", "cost": 0.0123},
            {"result": "tests written", "cost": 0.01},
        ]
    )
    g = write_graph(
        tmp_path,
        """
        name: agent
        inputs: {task: {required: true}}
        nodes:
          - id: impl
            prompt: "Implement {{ inputs.task }}."
            worktree: lane
            allowed_tools: [Read, Edit, "Bash(make *)"]
            permission_mode: acceptEdits
            budget_usd: 2
            success_check: {exit_zero: true, result_matches: '^[*_`\\s]*DONE\\b'}
          - id: child
            depends_on: [impl]
            handoff: session
            prompt: "Now write the tests."
    """,
    )
    r = omg_run(omg, g, "-i", "task=the greet function", env=claude.env())
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)

    first, second = claude.calls()
    argv = first["argv"]
    assert argv[:4] == ["-p", "--output-format", "stream-json", "--verbose"]
    assert first["prompt"] == "Implement the greet function."  # on stdin
    assert _flag(argv, "--permission-mode") == "acceptEdits"
    assert _flag(argv, "--allowedTools") == "Read,Edit,Bash(make *)"
    assert float(_flag(argv, "--max-budget-usd") or 0) == 2.0
    session = _flag(argv, "--session-id")
    assert session and "--resume" not in argv
    assert Path(first["cwd"]).name == "lane"
    # handoff: session forks the parent's session under a fresh id, priced by its own delta
    assert _flag(second["argv"], "--resume") == session
    assert "--fork-session" in second["argv"]
    child = _flag(second["argv"], "--session-id")
    assert child and child != session
    assert state["nodes"]["child"]["session_id"] == child
    assert state["nodes"]["child"]["cost_usd"] == pytest.approx(0.01)
    assert state["nodes"]["child"]["session_cost_usd"] == pytest.approx(0.0223)

    rec = state["nodes"]["impl"]
    assert (rec["verdict"], rec["provenance"]) == ("PASS", "self-reported")
    assert rec["session_id"] == session
    assert rec["cost_usd"] == pytest.approx(0.0123)
    assert rec["usage"] == {"input_tokens": 10, "output_tokens": 5}
    assert r.artifact("impl") == "**DONE** — implemented `greet`"
    assert of(r.events(), "node_started", "impl")[0]["session_id"] == session
    assert state["cost_usd"] == pytest.approx(0.0223)
    assert "$0.0123" in r.err


def test_an_error_reply_is_a_run_error_and_never_loops(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    claude.replies(
        ["DONE", {"result": "Not logged in · Please run /login", "is_error": True, "cost": 0}]
    )
    g = write_graph(
        tmp_path,
        """
        name: loggedout
        nodes:
          - id: impl
            prompt: Implement it.
          - id: review
            depends_on: [impl]
            prompt: Review it.
            feedback: {rerun: impl, max: 2}
    """,
    )
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    rec = state["nodes"]["review"]
    assert (rec["verdict"], rec["cause"], rec["judged"]) == ("FAIL", "run_error", False)
    assert "Not logged in" in rec["detail"]
    assert of(r.events(), "node_retried") == []
    assert len(claude.calls()) == 2


def test_a_node_over_its_budget_fails_post_hoc(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    claude.replies([{"result": "DONE", "cost": 0.5}])
    g = write_graph(
        tmp_path,
        """
        name: overbudget
        nodes:
          - id: impl
            prompt: Implement it.
            budget_usd: 0.1
            feedback_free: true
    """.replace("            feedback_free: true\n", ""),
    )
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    rec = state["nodes"]["impl"]
    assert (rec["verdict"], rec["cause"], rec["judged"]) == ("FAIL", "budget_exceeded", False)
    assert "exceeded budget_usd" in rec["detail"] and "$0.5000" in rec["detail"]
    assert rec["cost_usd"] == pytest.approx(0.5)


def test_claude_stopping_at_its_budget_is_budget_exceeded(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    claude.replies(
        [{"result": "", "subtype": "error_max_budget_usd", "is_error": True, "cost": 0.25}]
    )
    g = write_graph(
        tmp_path,
        """
        name: budgetstop
        nodes:
          - {id: impl, prompt: Implement it., budget_usd: 0.25}
    """,
    )
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 1, r.explain()
    rec = run_dir_check(r.dir)["nodes"]["impl"]
    assert rec["cause"] == "budget_exceeded"
    assert rec["cost_usd"] == pytest.approx(0.25)


def test_the_graph_budget_caps_spend_across_the_run(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    claude.replies([{"result": "DONE", "cost": 0.6}])
    g = write_graph(
        tmp_path,
        """
        name: capped
        budget_usd: 1.0
        nodes:
          - {id: one, prompt: First.}
          - {id: two, prompt: Second., depends_on: [one]}
          - {id: three, prompt: Third., depends_on: [two]}
    """,
    )
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    calls = claude.calls()
    assert len(calls) == 2
    # what is left of the run's budget is handed to claude as its own ceiling
    assert float(_flag(calls[0]["argv"], "--max-budget-usd") or 0) == pytest.approx(1.0)
    assert float(_flag(calls[1]["argv"], "--max-budget-usd") or 0) == pytest.approx(0.4)
    rec = state["nodes"]["three"]
    assert (rec["verdict"], rec["cause"]) == ("FAIL", "budget_exceeded")
    assert "graph budget_usd $1.00 is spent" in rec["detail"]
    assert of(r.events(), "node_started", "three") == []
    assert state["cost_usd"] == pytest.approx(1.2)


def test_a_missing_claude_binary_is_a_clear_run_error(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: nobinary
        nodes:
          - {id: impl, prompt: Implement it.}
    """,
    )
    r = omg_run(omg, g, env=clean_env(OMG_CLAUDE_BIN=str(tmp_path / "no-such-claude")))
    assert r.code == 1, r.explain()
    rec = run_dir_check(r.dir)["nodes"]["impl"]
    assert rec["cause"] == "run_error"
    assert "OMG_CLAUDE_BIN" in rec["detail"]
    assert json.dumps(rec)  # the record is plain data


def test_a_runtime_whose_cli_is_missing_fails_its_node_with_the_install_hint(
    tmp_path: Path, omg
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: nocodex
        on_fail: continue
        nodes:
          - {id: impl, prompt: Implement it., runtime: codex}
          - {id: other, run: echo fine}
    """,
    )
    r = omg_run(omg, g, env={"OMG_CODEX_BIN": str(tmp_path / "no-codex")})
    assert r.code == 1, r.explain()
    assert "Traceback" not in r.err
    impl = r.state()["nodes"]["impl"]
    assert impl["cause"] == "run_error" and "npm install -g @openai/codex" in impl["detail"]
    assert r.state()["nodes"]["other"]["verdict"] == "PASS"  # on_fail: continue


def test_each_agent_execution_records_its_cli_version_and_a_change_is_warned_about(
    tmp_path: Path, omg
) -> None:
    g = write_graph(
        tmp_path,
        "name: v\nnodes:\n  - {id: a, prompt: one, allowed_tools: []}\n"
        "  - {id: b, prompt: two, depends_on: [a], allowed_tools: []}\n",
    )
    old, new = (
        ScriptedClaude(tmp_path / "old", "2.1.332"),
        ScriptedClaude(tmp_path / "new", "2.1.400"),
    )
    first = omg_run(omg, g, "--max-nodes", "1", env=old.env())
    assert first.proc.returncode == 4 and "warning" not in first.proc.stderr
    runs = str(tmp_path / "runs")
    second = omg("resume", "r1", "--no-commit", "--runs-dir", runs, cwd=tmp_path, env=new.env())
    assert second.returncode == 0, second.stderr
    passed = {e["node_id"]: e["cli_version"] for e in of(first.events(), "node_passed")}
    assert passed == {"a": "2.1.332", "b": "2.1.400"}
    assert "ran its agent nodes with claude 2.1.332, 2.1.400" in second.stderr
