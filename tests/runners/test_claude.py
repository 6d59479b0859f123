"""ClaudeRunner against a real stub executable run through the real omg.proc.spawn."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from omg.runners.claude import ClaudeRunner
from omg.runners.claude.reply import parse_envelope

SID = "3f2b8c1e-0000-4000-8000-000000000001"
PARENT = "9a9a9a9a-0000-4000-8000-000000000002"


def ok_envelope(**over: object) -> dict[str, object]:
    env: dict[str, object] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "All done: 3 files changed.",
        "session_id": SID,
        "total_cost_usd": 0.0123,
        "duration_ms": 1500,
        "num_turns": 4,
        "usage": {
            "input_tokens": 120,
            "output_tokens": 45,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 7,
            "server_tool_use": {"web_search_requests": 0},
            "service_tier": "standard",
        },
    }
    env.update(over)
    return env


@pytest.fixture
def rt(claude_stub) -> ClaudeRunner:
    return ClaudeRunner(binary=str(claude_stub.bin))


# -- argv ----------------------------------------------------------------------------------


def test_argv_fresh_session_minimal(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(envelope=ok_envelope())
    inv = make_inv("fix the bug", session_id=SID)
    rt.run(inv, rec_spawn)
    expected = [
        str(claude_stub.bin),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--setting-sources",
        "user",
        "--strict-mcp-config",
        "--session-id",
        SID,
    ]
    assert rt.argv(inv) == expected
    assert rec_spawn.calls[0]["argv"] == expected
    assert claude_stub.last()["argv"] == expected[1:]
    assert claude_stub.last()["stdin"] == "fix the bug"  # the prompt, on standard input


def test_argv_every_optional_flag_in_order(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(envelope=ok_envelope())
    inv = make_inv(
        "review it",
        node=dict(
            agent="reviewer",
            model="claude-sonnet-4-5",
            permission_mode="acceptEdits",
            allowed_tools=("Read", "Bash(git *)", "Edit"),
        ),
        session_id=SID,
        budget_usd=1.5,
    )
    rt.run(inv, rec_spawn)
    assert claude_stub.last()["argv"] == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--setting-sources",
        "user",
        "--strict-mcp-config",
        "--permission-mode",
        "acceptEdits",
        "--max-budget-usd",
        "1.5",
        "--agent",
        "reviewer",
        "--model",
        "claude-sonnet-4-5",
        "--allowedTools",
        "Read,Bash(git *),Edit",
        "--session-id",
        SID,
    ]


def test_argv_a_node_opting_in_to_project_settings_loads_the_checkouts_too(
    rt, claude_stub, make_inv, rec_spawn
):
    claude_stub.script(envelope=ok_envelope())
    inv = make_inv("review it", node=dict(project_settings=True), session_id=SID)
    rt.run(inv, rec_spawn)
    argv = claude_stub.last()["argv"]
    assert argv[3:6] == ["--verbose", "--setting-sources", "user,project,local"]
    assert "--strict-mcp-config" not in argv  # the checkout's .mcp.json servers load too


def test_argv_a_session_handoff_forks_the_parent_under_a_fresh_id(
    rt, claude_stub, make_inv, rec_spawn
):
    claude_stub.script(envelope=ok_envelope(session_id=SID))
    inv = make_inv("continue", session_id=SID, resume_session=PARENT)
    out = rt.run(inv, rec_spawn)
    argv = claude_stub.last()["argv"]
    assert argv == [
        "-p", "--output-format", "stream-json", "--verbose",
        "--setting-sources", "user", "--strict-mcp-config",
        "--resume", PARENT, "--fork-session", "--session-id", SID,
    ]  # fmt: skip
    assert out.session_id == SID


@pytest.mark.parametrize(
    ("node", "budget", "absent"),
    [
        (
            {},
            None,
            [
                "--permission-mode",
                "--max-budget-usd",
                "--agent",
                "--model",
                "--allowedTools",
                "--resume",
                "--session-id",
            ],
        ),
        ({"allowed_tools": ()}, 0.0, ["--allowedTools", "--max-budget-usd"]),
        ({"agent": "", "model": ""}, None, ["--agent", "--model"]),
    ],
)
def test_argv_optional_flags_absent(rt, make_inv, node, budget, absent):
    argv = rt.argv(make_inv("x", node=node, budget_usd=budget))
    for flag in absent:
        assert flag not in argv
    assert argv[1:5] == ["-p", "--output-format", "stream-json", "--verbose"]


def test_argv_budget_is_a_plain_decimal(rt, make_inv):
    assert rt.argv(make_inv(budget_usd=0.00001))[-1] == "0.00001"
    assert rt.argv(make_inv(budget_usd=2))[-1] == "2.0"


def test_a_prompt_is_never_an_argument_so_dashes_and_size_do_not_matter(
    rt, claude_stub, make_inv, rec_spawn
):
    claude_stub.script(envelope=ok_envelope())
    big = "--help me\n" + "x" * (300 * 1024)  # over the 128 KiB a single argument may hold
    out = rt.run(make_inv(big, session_id=SID), rec_spawn)
    assert out.error is None, out.detail
    assert claude_stub.last()["stdin"] == big
    assert all(len(a) < 1000 for a in claude_stub.last()["argv"])


def test_run_uses_cwd_env_and_separate_stderr(
    rt, claude_stub, make_inv, rec_spawn, base_env, tmp_path
):
    claude_stub.script(envelope=ok_envelope())
    env = {**base_env, "ANTHROPIC_API_KEY": "sk-test", "OMG_MARKER": "1"}
    inv = make_inv(cwd=tmp_path / "elsewhere", env=env, timeout_s=12.5)
    rt.run(inv, rec_spawn)
    call = rec_spawn.calls[0]
    assert call["merge_stderr"] is False
    assert call["timeout_s"] == 12.5
    seen = claude_stub.last()
    assert Path(seen["cwd"]).resolve() == (tmp_path / "elsewhere").resolve()
    seen_env = {k: v for k, v in seen["env"].items() if k not in ("LC_CTYPE", "_OMG_CHILD")}
    assert seen_env == env  # exactly the caller's environment, and the mark of the child
    assert len(seen["env"]["_OMG_CHILD"]) == 16


# -- parsing -------------------------------------------------------------------------------


def test_success_envelope_fields(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(envelope=ok_envelope(), stderr="some progress noise\n")
    out = rt.run(make_inv(session_id=SID), rec_spawn)
    assert out.error is None
    assert out.exit_code == 0
    assert out.result == "All done: 3 files changed."
    assert out.session_id == SID
    assert out.spend.cost_usd == pytest.approx(0.0123)
    assert out.spend.cost_unknown is False
    assert dict(out.spend.usage) == {
        "input_tokens": 120,
        "output_tokens": 45,
        "cache_read_input_tokens": 1000,
        "cache_creation_input_tokens": 7,
    }
    assert all(type(v) is int for v in out.spend.usage.values())
    assert out.duration_s > 0


def test_envelope_session_id_falls_back_to_invocation(rt, claude_stub, make_inv, rec_spawn):
    env = ok_envelope()
    del env["session_id"]
    claude_stub.script(envelope=env)
    assert rt.run(make_inv(session_id=SID), rec_spawn).session_id == SID


def test_envelope_after_other_lines_and_whitespace(rt, claude_stub, make_inv, rec_spawn):
    import json

    claude_stub.script(
        stdout='\n  warning: something\n{"type": "system"}\n'
        + json.dumps(ok_envelope(result="last one"))
        + "\n\n"
    )
    out = rt.run(make_inv(), rec_spawn)
    assert out.error is None
    assert out.result == "last one"


def test_parse_envelope_shapes():
    import json

    assert parse_envelope("") is None
    assert parse_envelope("   \n") is None
    assert parse_envelope("[1, 2]") is None
    assert parse_envelope('{"hello": 1}') is None
    verbose = json.dumps([{"type": "system"}, ok_envelope(result="from array")])
    env = parse_envelope(verbose)
    assert env is not None and env.result == "from array"
    env = parse_envelope('  {"result": "bare", "total_cost_usd": 1}  ')
    assert env is not None and env.result == "bare" and env.cost_usd == 1.0


def test_missing_cost_is_marked_unknown(rt, claude_stub, make_inv, rec_spawn):
    env = ok_envelope()
    del env["total_cost_usd"]
    claude_stub.script(envelope=env)
    out = rt.run(make_inv(), rec_spawn)
    assert out.error is None and out.spend.cost_usd == 0.0 and out.spend.cost_unknown is True


# -- error replies are run errors, never judgments ------------------------------------------


def test_not_logged_in_is_run_error_with_login_hint(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(
        envelope=ok_envelope(
            is_error=True, result="Not logged in · Please run /login", total_cost_usd=0, usage={}
        ),
        exit=1,
    )
    out = rt.run(make_inv(session_id=SID), rec_spawn)
    assert out.error == "run_error"
    assert out.exit_code == 1
    assert "Not logged in · Please run /login" in out.detail
    assert (
        "log in with `claude /login`, or set ANTHROPIC_API_KEY or "
        "CLAUDE_CODE_OAUTH_TOKEN for the runner"
    ) in out.detail


def test_api_error_is_run_error(rt, claude_stub, make_inv, rec_spawn):
    msg = 'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}'
    claude_stub.script(envelope=ok_envelope(is_error=True, result=msg, total_cost_usd=0.002))
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "run_error"
    assert out.exit_code == 0
    assert "API Error: 529" in out.detail
    assert "not a judgment" in out.detail
    assert "claude /login" in out.detail
    assert out.spend.cost_usd == pytest.approx(0.002)


def test_error_list_is_the_cause(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(
        envelope=ok_envelope(
            is_error=True,
            subtype="error_during_execution",
            result="",
            errors=["Invalid API key", "retry"],
        ),
        exit=1,
    )
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "run_error"
    assert "Invalid API key / retry" in out.detail


def test_a_resume_the_cli_cannot_find_says_where_the_session_should_have_come_from(
    rt, claude_stub, make_inv, rec_spawn
):
    """2.1.332 answers a missing --resume session with an is_error envelope (exit 1)."""
    missing = "No conversation found with session ID: c1fddef1-ba8c-4401-8d65-db4ec5b425cc"
    claude_stub.script(
        envelope=ok_envelope(
            is_error=True, subtype="error_during_execution", result="", errors=[missing]
        ),
        exit=1,
    )
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "run_error"
    assert out.detail.startswith("claude could not resume the parent's session: No conversation")
    assert "its transcript travels with the run" in out.detail


def test_budget_subtype_is_budget_exceeded(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(
        envelope={
            "type": "result",
            "subtype": "error_max_budget_usd",
            "is_error": True,
            "session_id": SID,
            "total_cost_usd": 0.51,
            "usage": {"input_tokens": 9},
        },
        exit=1,
    )
    out = rt.run(make_inv(budget_usd=0.5), rec_spawn)
    assert out.error == "budget_exceeded"
    assert out.spend.cost_usd == pytest.approx(0.51)
    assert out.session_id == SID
    assert out.spend.usage == {"input_tokens": 9}
    assert "max-budget-usd" in out.detail


def test_the_turn_limit_is_its_own_cause(rt, claude_stub, make_inv, rec_spawn):
    """What the pinned CLI (2.1.332) prints at --max-turns: no result, an errors list."""
    claude_stub.script(
        envelope={
            "type": "result",
            "subtype": "error_max_turns",
            "is_error": True,
            "terminal_reason": "max_turns",
            "stop_reason": "tool_use",
            "num_turns": 2,
            "errors": ["Reached maximum number of turns (1)"],
            "session_id": SID,
            "total_cost_usd": 0.000684,
        },
    )
    out = rt.run(make_inv(node=dict(max_turns=1)), rec_spawn)
    assert claude_stub.last()["argv"][-2:] == ["--max-turns", "1"]
    assert out.error == "turn_limit"
    assert out.session_id == SID  # the session a retry continues
    assert "Reached maximum number of turns (1)" in out.detail
    assert "on: [turn_limit]" in out.detail


def test_a_retry_continuing_a_session_resumes_it_without_forking(
    rt, claude_stub, make_inv, rec_spawn
):
    claude_stub.script(envelope=ok_envelope(session_id=SID))
    rt.run(replace(make_inv("continue", resume_session=SID), fork=False), rec_spawn)
    assert claude_stub.last()["argv"][-2:] == ["--resume", SID]


def test_exit_one_with_only_stderr_is_a_refusal_not_broken_output(
    rt, claude_stub, make_inv, rec_spawn
):
    claude_stub.script(stderr="x" * 2000 + "boom: node crashed\n", exit=1)
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "run_error"
    assert out.detail.startswith("claude refused to start (exit 1)")
    assert "boom: node crashed" in out.detail
    assert "x" * 501 not in out.detail
    assert out.spend.cost_unknown is True


@pytest.mark.parametrize(
    ("stderr", "hint"),
    [
        ("--agent 'nosuch' not found. Available agents: claude, Explore", ".claude/agents/"),
        ("No conversation found with session ID: 0000", "its transcript travels with the run"),
        (
            "--dangerously-skip-permissions cannot be used with root/sudo privileges",
            "run the job as a non-root user",
        ),
        (  # the CLI's own way out, for throwaway sandboxes
            "--dangerously-skip-permissions cannot be used with root/sudo privileges",
            "{IS_SANDBOX: '1'}",
        ),
    ],
)
def test_each_refusal_of_the_cli_gets_its_own_hint(
    rt, claude_stub, make_inv, rec_spawn, stderr, hint
):
    claude_stub.script(stderr=stderr + "\n", exit=1)
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "run_error" and hint in out.detail


def test_non_json_is_output_error_with_stdout_head(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(stdout="Hello! I am a plain text reply. " * 40)
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "output_error"
    assert out.detail.startswith("claude output was not a JSON envelope: Hello! I am")
    assert len(out.detail) < 400


def test_nonzero_exit_with_valid_envelope_is_not_a_runtime_error(
    rt, claude_stub, make_inv, rec_spawn
):
    claude_stub.script(envelope=ok_envelope(result="I could not finish."), exit=3)
    out = rt.run(make_inv(), rec_spawn)
    assert out.error is None
    assert out.exit_code == 3
    assert out.result == "I could not finish."
    assert out.spend.cost_usd == pytest.approx(0.0123)


@pytest.mark.parametrize("code", [126, 127])
def test_exit_126_127_is_environment_failure(rt, claude_stub, make_inv, rec_spawn, code):
    claude_stub.script(stderr="/usr/bin/env: 'node': No such file or directory\n", exit=code)
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "run_error"
    assert out.exit_code == code
    assert "environment failure" in out.detail and "'node'" in out.detail


def test_command_not_found_is_environment_failure(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(stderr="sh: 1: node: command not found\n", exit=2)
    out = rt.run(make_inv(), rec_spawn)
    assert out.error == "run_error"
    assert "environment failure" in out.detail


# -- timeout -------------------------------------------------------------------------------


def test_timeout_kills_the_process_group(rt, claude_stub, make_inv, rec_spawn, process_gone):
    claude_stub.script(grandchild=True, sleep=60)
    out = rt.run(make_inv(session_id=SID, timeout_s=1.0), rec_spawn)
    assert out.error == "timeout"
    assert out.exit_code is None
    assert out.spend.cost_unknown is True
    assert out.session_id == SID
    assert out.detail == (
        "timed out after 1s (node timeout); claude and every process it started were "
        "stopped; cost unknown (stopped before reporting)"
    )
    assert out.duration_s < 20
    gpid = claude_stub.last()["grandchild_pid"]
    assert process_gone(gpid), f"grandchild {gpid} survived the timeout"


def test_a_tool_in_a_session_of_its_own_never_outlives_the_node(
    rt, claude_stub, make_inv, rec_spawn, process_gone
):
    claude_stub.script(detached=True, sleep=60)
    out = rt.run(make_inv(session_id=SID, timeout_s=1.0), rec_spawn)
    assert out.error == "timeout"
    pid = claude_stub.last()["detached_pid"]
    assert process_gone(pid), f"tool process {pid} survived the timeout"
    claude_stub.script(detached=True, envelope=ok_envelope())
    out = rt.run(make_inv(session_id=SID), rec_spawn)
    assert out.error is None
    pid = claude_stub.last()["detached_pid"]
    assert process_gone(pid), f"tool process {pid} survived its node"


def test_a_silent_agent_is_stopped_as_stuck_not_slow(rt, claude_stub, make_inv, rec_spawn):
    claude_stub.script(sleep=60)
    out = rt.run(make_inv(session_id=SID, node=dict(idle_timeout="1s"), timeout_s=30), rec_spawn)
    assert out.error == "idle_timeout"
    assert "stuck: no output and no transcript growth for 1s" in out.detail
    assert out.duration_s < 15


# -- binary resolution ---------------------------------------------------------------------


class RefusingSpawn:
    def __call__(self, req):  # pragma: no cover - must never be reached
        raise AssertionError(f"spawned {req.argv} although claude is missing")


def test_missing_binary_is_run_error_with_install_hint(make_inv, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    rt = ClaudeRunner(parent_env={"PATH": str(empty)})
    out = rt.run(make_inv(), RefusingSpawn())
    assert out.error == "run_error"
    assert "npm install -g @anthropic-ai/claude-code" in out.detail
    assert "OMG_CLAUDE_BIN" in out.detail
    assert rt.argv(make_inv())[0] == "claude"  # a dry run can still render the argv


def test_omg_claude_bin_names_a_missing_file(make_inv, tmp_path):
    rt = ClaudeRunner(parent_env={"OMG_CLAUDE_BIN": str(tmp_path / "nope"), "PATH": ""})
    out = rt.run(make_inv(), RefusingSpawn())
    assert out.error == "run_error"
    assert "OMG_CLAUDE_BIN" in out.detail and "nope" in out.detail


def test_omg_claude_bin_is_honoured(claude_stub, make_inv, rec_spawn, tmp_path):
    (tmp_path / "decoy").mkdir()
    decoy = tmp_path / "decoy" / "claude"
    decoy.write_text("#!/bin/sh\nexit 99\n")
    decoy.chmod(0o755)
    claude_stub.script(envelope=ok_envelope())
    rt = ClaudeRunner(
        parent_env={"OMG_CLAUDE_BIN": str(claude_stub.bin), "PATH": str(decoy.parent)}
    )
    out = rt.run(make_inv(), rec_spawn)
    assert rec_spawn.calls[0]["argv"][0] == str(claude_stub.bin)
    assert out.error is None and out.result == "All done: 3 files changed."


def test_claude_found_on_parent_path(claude_stub, make_inv, rec_spawn):
    claude_stub.script(envelope=ok_envelope())
    rt = ClaudeRunner(parent_env={"PATH": os.pathsep.join(["/nonexistent", str(claude_stub.dir)])})
    out = rt.run(make_inv(), rec_spawn)
    assert rec_spawn.calls[0]["argv"][0] == str(claude_stub.bin)
    assert out.error is None


def test_explicit_binary_wins_over_omg_claude_bin(claude_stub, make_inv):
    rt = ClaudeRunner(binary=str(claude_stub.bin), parent_env={"OMG_CLAUDE_BIN": "/x/claude"})
    assert rt.argv(make_inv())[0] == str(claude_stub.bin)
