"""codex through omg's commands: the shipped cross-model rehearsal, --dry-run's argv, the
ledger and step summary of an unpriced node, prices, token budgets, who sees which key, and
what lint refuses or warns about on a codex node."""

from __future__ import annotations

import json
from pathlib import Path

from kit import clean_env, omg_in_process, rooms_left, run_graph

from omg.ci.report_md import markdown
from omg.cli import ledger
from omg.runners.process import child_env
from omg.runners.registry import default_runners

from .conftest import CLAUDE, ROOT, runners, script

TASK = "add hello.sh printing 'hello, world'"
#: The -c that keeps codex's keys out of the agent's commands, as a dry run quotes it.
KEEP_OUT = """-c 'shell_environment_policy.exclude=["OPENAI_API_KEY", "CODEX_API_KEY"]'"""


def test_the_cross_model_rehearsal_loops_once_and_ships(repo: Path, codex_bin: str) -> None:
    env = clean_env(
        HOME=str(repo.parent / "home"), OMG_CODEX_BIN=codex_bin, OMG_CLAUDE_BIN=str(CLAUDE)
    )
    done = omg_in_process(
        "run", str(ROOT / "graphs" / "cross-model.yaml"), "-i", f"task={TASK}", "--run-id", "xm",
        "--rehearse", str(ROOT / "graphs" / "rehearsals" / "cross-model.yaml"), cwd=repo, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    run = repo / ".omg" / "runs" / "xm"
    state = json.loads((run / "state.json").read_text())
    assert state["status"] == "passed" and state["nodes"]["review"]["provenance"] == "verified"
    assert state["nodes"]["impl"]["round"] == 1 and state["nodes"]["impl"]["cli_version"]
    lane = repo / ".omg" / "worktrees" / "xm" / "lane"
    assert (lane / "hello.sh").read_text() == "#!/bin/sh\necho 'hello, world'\n"
    assert "stand-in's default answer" not in done.stderr  # every request matched its rule
    assert not (repo / ".omg" / "rehearsal").exists()  # each execution had a room instead
    assert rooms_left(run, env) == []


def test_dry_run_shows_the_codex_argv(repo: Path, codex_bin: str) -> None:
    (repo / "g.yaml").write_text(
        "name: g\nnodes:\n  - {id: a, runtime: codex, model: gpt-x, prompt: hi,"
        " permission_mode: plan}\n"
        "  - {id: b, runtime: codex, prompt: go on, depends_on: [a], handoff: session}\n"
    )
    done = omg_in_process(
        "run", "g.yaml", "--dry-run", cwd=repo, env=clean_env(OMG_CODEX_BIN=codex_bin)
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"argv: {codex_bin} exec --json --skip-git-repo-check --sandbox read-only "
        f"-c 'approval_policy=\"never\"' {KEEP_OUT} --ignore-user-config --strict-config "
        "-m gpt-x -" in done.stdout
    )
    assert (
        f"--sandbox workspace-write -c 'approval_policy=\"never\"' {KEEP_OUT} "
        "--ignore-user-config --strict-config fork '<parent session>' -" in done.stdout
    )


def test_dry_run_shows_the_provider_flags_a_real_run_would_pass(repo: Path, codex_bin: str) -> None:
    """With OMG_CODEX_BASE_URL set (a proxy, a stand-in), the codex argv that runs begins with
    omg's provider flags; the dry run shows them, not an argv that never runs."""
    (repo / "g.yaml").write_text("name: g\nnodes:\n  - {id: a, runtime: codex, prompt: hi}\n")
    url = "http://127.0.0.1:9/v1"
    done = omg_in_process(
        "run", "g.yaml", "--dry-run", cwd=repo,
        env=clean_env(OMG_CODEX_BIN=codex_bin, OMG_CODEX_BASE_URL=url),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    argv = next(line for line in done.stdout.splitlines() if "argv:" in line)
    assert f"argv: {codex_bin} -c 'model_provider=\"omg\"'" in argv
    assert f'model_providers.omg.base_url="{url}"' in argv
    assert argv.index("model_providers.omg.base_url") < argv.index(" exec --json ")


UNPRICED = "name: g\nnodes:\n  - {id: a, runtime: codex, prompt: go}\n"
REPLY = {
    "name": "r",
    "turns": [{"text": "ok", "usage": {"input_tokens": 100, "output_tokens": 20}}],
}


def test_an_unpriced_codex_node_costs_unknown_tokens_never_zero(stub, env, repo, codex_bin) -> None:
    script(stub, REPLY)
    ran = run_graph(repo, UNPRICED, parent_env=env(), runners=runners(codex_bin))
    assert ran.end is not None
    state, events = ran.state(), ran.events()
    table = ledger.render(ran.end.graph, state, events)  # type: ignore[arg-type]
    assert "unknown (120 tokens)" in table and "$0.0000  " not in table.split("a    ")[1]
    assert "TOTAL COST: unknown (120 tokens unpriced; known subtotal $0.0000)" in table
    from omg.ci.report_md import Links, Situation

    md = markdown(ran.end.graph, state, events, Situation("passed"), Links(), rows=20)  # type: ignore[arg-type]
    assert "**Spent:** unknown (120 tokens unpriced" in md and "unknown (120 tokens)" in md


def test_a_priced_codex_node_costs_its_tokens_at_the_graphs_prices(
    stub, env, repo, codex_bin
) -> None:
    script(stub, REPLY)
    graph = "name: g\nprices:\n  default: {input: 2, output: 10}\n" + UNPRICED.split("\n", 1)[1]
    ran = run_graph(repo, graph, parent_env=env(), runners=runners(codex_bin))
    rec = ran.state()["nodes"]["a"]
    assert not rec.get("cost_unknown")
    assert abs(rec["cost_usd"] - (100 * 2 + 20 * 10) / 1e6) < 1e-12


def test_a_token_budget_fails_a_node_that_used_more(stub, env, repo, codex_bin) -> None:
    script(stub, REPLY)
    ran = run_graph(repo, UNPRICED.replace("prompt: go", "prompt: go, budget_tokens: 50"),
                    parent_env=env(), runners=runners(codex_bin))  # fmt: skip
    rec = ran.state()["nodes"]["a"]
    assert rec["cause"] == "budget_exceeded" and "120 tokens used vs 50 budgeted" in rec["detail"]


def test_each_runtime_sees_only_its_own_keys() -> None:
    parent = {
        "PATH": "/bin", "OPENAI_API_KEY": "sk-o", "CODEX_API_KEY": "ck", "CODEX_HOME": "/c",
        "ANTHROPIC_API_KEY": "sk-a", "CLAUDE_CODE_OAUTH_TOKEN": "t",
    }  # fmt: skip
    runs = default_runners()
    codex = child_env(parent, prefixes=runs["codex"].env_prefixes)
    claude = child_env(parent, prefixes=runs["claude"].env_prefixes)
    shell = child_env(parent, prefixes=runs["shell"].env_prefixes)
    assert {"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME"} <= set(codex)
    assert not {"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"} & set(codex)
    assert not {"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME"} & set(claude)
    assert set(shell) == {"PATH"}


def lint(repo: Path, text: str) -> str:
    (repo / "g.yaml").write_text(text)
    done = omg_in_process("lint", "g.yaml", cwd=repo)
    return done.stdout + done.stderr


def test_lint_refuses_claude_only_fields_on_codex_and_warns_of_unpriced_budgets(repo: Path) -> None:
    said = lint(repo, "name: g\nnodes:\n  - id: a\n    runtime: codex\n    prompt: p\n"
                "    allowed_tools: [Write]\n    agent: rev\n")  # fmt: skip
    assert 'g.yaml:6: error: node "a": runtime: codex with allowed_tools is claude' in said
    assert "permission_mode" in said and "g.yaml:7" in said and "drop agent:" in said
    said = lint(repo, "name: g\nnodes:\n  - {id: a, runtime: codex, prompt: p, budget_usd: 2}\n")
    assert "name the tools" not in said  # claude's advice, meaningless to codex
    assert "budget_usd cannot be enforced for this codex node" in said and "budget_tokens" in said
    said = lint(repo, "name: g\nprices: {default: {input: 1, output: 2}}\n"
                "nodes:\n  - {id: a, runtime: codex, prompt: p, budget_usd: 2}\n")  # fmt: skip
    assert "cannot be enforced" not in said


def test_a_rehearsed_unpriced_node_says_unknown_tokens_as_it_ends(
    repo: Path, codex_bin: str
) -> None:
    (repo / "g.yaml").write_text(UNPRICED)
    (repo / "s.yaml").write_text(
        "rules:\n  - name: a\n    when: {node: a, runtime: codex, round: 0, attempt: 1}\n"
        "    turns: [{text: ok, usage: {input_tokens: 100, output_tokens: 20}}]\n"
    )
    env = clean_env(HOME=str(repo.parent / "home"), OMG_CODEX_BIN=codex_bin)
    done = omg_in_process(
        "run", "g.yaml", "--run-id", "u", "--rehearse", "s.yaml", cwd=repo, env=env
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "✓ a  PASS (exit-only)  unknown (120 tokens)" in done.stderr  # matched by its headers
    assert "TOTAL COST: unknown (120 tokens unpriced" in done.stdout
