"""What CI users of Claude Code meet, run through omg with the real CLI and the stub model:
API errors and outages, an empty reply, a permission denial, a hang, a budget overrun, argv the
pinned CLI accepts for every field the schema allows, and agent nodes in parallel."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from kit import omg_in_process

from .conftest import ROOT, Env


def rehearse(
    repo: Path, env: dict[str, str], graph: str, script: str, *args: str, run_id: str = "r"
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], list[dict[str, Any]]]:
    (repo / "g.yaml").write_text(graph)
    (repo / "s.yaml").write_text(script)
    argv = ("run", "g.yaml", "--run-id", run_id, "--rehearse", "s.yaml", "--no-commit", *args)
    done = omg_in_process(*argv, cwd=repo, env=env)  # the CLI under test is claude's
    run = repo / ".omg" / "runs" / run_id
    state = json.loads((run / "state.json").read_text()) if (run / "state.json").exists() else {}
    events = (
        [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]
        if (run / "events.jsonl").exists()
        else []
    )
    return done, state, events


ONE = "name: g\nnodes:\n  - id: a\n    prompt: do it\n"


def test_an_unauthenticated_cli_is_a_run_error_with_the_login_hint(repo: Path, env: Env) -> None:
    script = "rules:\n  - name: refuse\n    error: {status: 401, message: invalid x-api-key}\n"
    done, state, events = rehearse(repo, env(), ONE, script)
    assert done.returncode == 1, done.stderr
    rec = state["nodes"]["a"]
    assert (rec["verdict"], rec["cause"]) == ("FAIL", "run_error")
    assert (
        "could not authenticate: the API refused the credentials 2 times (HTTP 401)"
        in (rec["detail"])
    )
    assert "ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN" in rec["detail"]
    # stopped at the second refusal, not after the CLI's ten retries with backoff
    failed = [e for e in events if e["event"] == "node_failed"]
    assert failed[0]["api_retries"] == 2


@pytest.mark.parametrize(("status", "words"), [(529, "overloaded"), (500, "the API failed")])
def test_an_api_that_keeps_failing_is_told_apart_from_the_work(
    repo: Path, env: Env, status: int, words: str
) -> None:
    """An outage fails the node as run_error (a rate limit pauses instead: test_limits)."""
    script = f"rules:\n  - name: down\n    error: {{status: {status}, retry_after: 0}}\n"
    done, state, _ = rehearse(repo, env(CLAUDE_CODE_MAX_RETRIES="1"), ONE, script)
    assert done.returncode == 1, done.stderr
    rec = state["nodes"]["a"]
    assert rec["cause"] == "run_error" and words in rec["detail"] and str(status) in rec["detail"]


def test_an_api_outage_that_outlasts_the_timeout_says_so(repo: Path, env: Env) -> None:
    """The CLI waits out each 529 for the 50 s its ``retry-after`` says and gives up
    only after its third, so the outage outlasts the node's 10 s timeout by minutes whatever the
    machine's speed; the 10 s leave room for the CLI's first call on a loaded machine."""
    graph = "name: g\nnodes:\n  - id: a\n    prompt: do it\n    timeout: 10s\n"
    script = "rules:\n  - name: down\n    error: {status: 529, retry_after: 50}\n"
    done, state, events = rehearse(repo, env(), graph, script)
    assert done.returncode == 1, done.stderr
    rec = state["nodes"]["a"]
    assert rec["cause"] == "run_error", rec
    assert "the API was failing meanwhile" in rec["detail"] and "HTTP 529" in rec["detail"]
    assert "timed out after 10s" in rec["detail"]
    failed = [e for e in events if e["event"] == "node_failed"]
    assert failed and failed[0].get("api_retries", 0) >= 1


def test_an_empty_reply_is_an_output_error_never_a_silent_pass(repo: Path, env: Env) -> None:
    script = "rules:\n  - name: nothing\n    empty: true\n"
    done, state, _ = rehearse(repo, env(), ONE, script)
    assert done.returncode == 1, done.stderr
    rec = state["nodes"]["a"]
    assert rec["cause"] == "output_error"
    assert "the agent exited without answering" in rec["detail"]


DENIED = """\
rules:
  - name: tries a command it was not granted
    turns:
      - tool: Bash
        input: {command: "rm -rf victim"}
      - text: DONE
"""


def test_a_denied_tool_is_recorded_and_exit_zero_alone_cannot_pass(repo: Path, env: Env) -> None:
    (repo / "victim").mkdir()
    done, state, _ = rehearse(repo, env(), ONE, DENIED)
    assert done.returncode == 1, done.stderr
    rec = state["nodes"]["a"]
    assert rec["verdict"] == "FAIL" and rec["permission_denials"] == ["Bash(rm -rf victim)"]
    assert "claude was refused Bash(rm -rf victim)" in rec["detail"]
    assert (repo / "victim").is_dir()  # the real CLI really refused it
    checked = (
        "name: g\nnodes:\n  - id: a\n    prompt: do it\n    success_check: {result_matches: DONE}\n"
    )
    done, state, _ = rehearse(repo, env(), checked, DENIED, run_id="r2")
    assert done.returncode == 0, done.stderr
    rec = state["nodes"]["a"]
    assert rec["verdict"] == "PASS" and rec["permission_denials"] == ["Bash(rm -rf victim)"]
    assert "denied Bash(rm -rf victim)" in done.stdout  # the ledger shows it


def test_a_hung_api_is_caught_by_the_watchdog_as_stuck(repo: Path, env: Env) -> None:
    graph = "name: g\nnodes:\n  - id: a\n    prompt: do it\n    idle_timeout: 2s\n    timeout: 2m\n"
    script = "rules:\n  - name: hangs\n    hang: 60\n    reply: late\n"
    t0 = time.monotonic()
    done, state, _ = rehearse(repo, env(), graph, script)
    assert done.returncode == 1, done.stderr
    assert time.monotonic() - t0 < 45
    rec = state["nodes"]["a"]
    assert rec["cause"] == "idle_timeout" and "stuck: no output" in rec["detail"]


def test_a_budget_overrun_stops_the_session(repo: Path, env: Env) -> None:
    graph = "name: g\nnodes:\n  - id: a\n    prompt: do it\n    budget_usd: 0.01\n"
    script = (
        "rules:\n  - name: pricey\n    turns:\n      - text: expensive\n"
        "        usage: {input_tokens: 900000, output_tokens: 90000}\n"
    )
    done, state, _ = rehearse(repo, env(), graph, script)
    assert done.returncode == 1, done.stderr
    rec = state["nodes"]["a"]
    assert (
        rec["cause"] == "budget_exceeded" and "--max-budget-usd limit of $0.0100" in rec["detail"]
    )


def test_three_agent_nodes_run_in_parallel(repo: Path, env: Env) -> None:
    graph = "name: g\nconcurrency: 3\nnodes:\n" + "".join(
        f"  - id: n{i}\n    prompt: part {i}\n" for i in range(3)
    )
    script = "rules:\n  - name: slow\n    hang: 2\n    reply: done\n"
    t0 = time.monotonic()
    done, state, events = rehearse(repo, env(), graph, script)
    took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    assert all(state["nodes"][f"n{i}"]["verdict"] == "PASS" for i in range(3))
    starts = [e["seq"] for e in events if e["event"] == "node_started"]
    first_end = min(e["seq"] for e in events if e["event"] == "node_passed")
    assert len(starts) == 3 and max(starts) < first_end  # all three were in flight at once
    assert took < 2 * 3 + 10


MODES = ["acceptEdits", "auto", "default", "dontAsk", "plan"]


@pytest.mark.parametrize("mode", MODES)
def test_the_pinned_cli_accepts_the_argv_of_every_schema_field(
    repo: Path, env: Env, mode: str
) -> None:
    graph = (
        "name: g\nnodes:\n  - id: a\n    prompt: hi\n"
        f"    permission_mode: {mode}\n    model: claude-sonnet-4-5\n    agent: general-purpose\n"
        "    allowed_tools: [Read, Edit, 'Bash(make test)', 'Bash(git diff:*)']\n"
        "    budget_usd: 1\n"
    )
    done, state, _ = rehearse(repo, env(), graph, "rules:\n  - name: ok\n    reply: fine\n")
    assert done.returncode == 0, done.stderr + json.dumps(state.get("nodes"))
    assert state["nodes"]["a"]["cli_version"].startswith("2.1.")


def test_bypass_permissions_is_refused_as_root_with_the_cli_root_rule(repo: Path, env: Env) -> None:
    import os

    graph = "name: g\nnodes:\n  - id: a\n    prompt: hi\n    permission_mode: bypassPermissions\n"
    _, state, _ = rehearse(repo, env(), graph, "rules:\n  - name: ok\n    reply: fine\n")
    rec = state["nodes"]["a"]
    if os.geteuid() == 0:  # CI containers: the CLI refuses, and omg says why and what to do
        assert rec["cause"] == "run_error" and "non-root user" in rec["detail"], rec
    else:
        assert rec["verdict"] == "PASS", rec


def test_the_repository_script_pins_one_cli_version() -> None:
    pins = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    lock = json.loads((ROOT / "package-lock.json").read_text())
    want = pins["@anthropic-ai/claude-code"]
    assert want[0].isdigit(), "pin an exact version, not a range"
    assert lock["packages"]["node_modules/@anthropic-ai/claude-code"]["version"] == want
