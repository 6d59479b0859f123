"""The stub model: rules matched on node, round, attempt, prompt and call; the default answer
names the closest rule; errors, empty answers and tool calls, as the real CLI meets them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from omg.errors import GraphError
from omg.stubmodel import StubModel, load
from omg.stubmodel.script import Request, build, unmatched_text

from .conftest import Env


def req(
    node: str = "impl", round_: int | None = 0, prompt: str = "do it", turn: int = 0, call: int = 1
) -> Request:
    return Request(node=node, round=round_, attempt=1, prompt=prompt, turn=turn, call=call)


SCRIPT = {
    "rules": [
        {"name": "second round", "when": {"node": "impl", "round": 1}, "reply": "two"},
        {"name": "by prompt", "when": {"prompt": "^Review"}, "reply": "reviewed"},
        {"name": "flaky", "when": {"node": "api", "call": [1, 2]}, "error": {"status": 529}},
        {"name": "api ok", "when": {"node": "api"}, "reply": "up"},
    ]
}


def test_the_first_rule_whose_conditions_all_hold_answers() -> None:
    script = build(SCRIPT, "s.yaml")
    assert script.match(req(round_=1)).name == "second round"  # type: ignore[union-attr]
    assert script.match(req(node="x", prompt="Review this")).name == "by prompt"  # type: ignore[union-attr]
    assert [script.match(req(node="api", call=n)).name for n in (1, 2, 3)] == [  # type: ignore[union-attr]
        "flaky",
        "flaky",
        "api ok",
    ]
    assert script.match(req(round_=0)) is None


def test_an_unmatched_request_is_told_which_rule_came_closest() -> None:
    script = build(SCRIPT, "s.yaml")
    text = unmatched_text(script, req(round_=0))
    assert "no rule of s.yaml matched (node 'impl', round 0, attempt 1, call 1, turn 0)" in text
    assert "the closest is rule 'second round', which wants round 1 (this is round 0)" in text


def test_a_bad_script_is_refused_with_its_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "s.yaml"
    bad.write_text("rules:\n  - name: x\n    when: {node: a}\n    turns:\n      - tool: Write\n")
    with pytest.raises(GraphError, match=r"s\.yaml:5: rules\[0\]\.turns\[0\]"):
        load(bad)
    bad.write_text("rules:\n  - name: x\n    when: {prompt: '('}\n    reply: hi\n")
    with pytest.raises(GraphError, match="is not a regular expression"):
        load(bad)


def claude(
    claude_bin: str, url: str, env: dict[str, str], cwd: Path, *args: str, node: str = ""
) -> dict:
    child = {
        **env,
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CONFIG_DIR": str(cwd / ".cfg"),
    }
    if node:
        child["ANTHROPIC_CUSTOM_HEADERS"] = f"X-Omg-Node: {node}"
    done = subprocess.run(
        [claude_bin, "-p", "go", "--output-format", "json", *args], cwd=cwd, env=child,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out: dict = json.loads(done.stdout)
    return out


def test_the_real_cli_runs_a_tool_call_and_reports_a_cost(
    claude_bin: str, env: Env, tmp_path: Path
) -> None:
    script = build(
        {"rules": [{"name": "w", "turns": [
            {"tool": "Write", "input": {"file_path": "out.txt", "content": "made by a tool\n"}},
            {"text": "written"},
        ]}]},
        "s",
    )  # fmt: skip
    with StubModel(script).serve() as stub:
        got = claude(claude_bin, stub.url, env(), tmp_path, "--allowedTools", "Write", node="impl")
    assert (tmp_path / "out.txt").read_text() == "made by a tool\n"
    assert got["result"] == "written" and got["num_turns"] == 2 and got["total_cost_usd"] > 0
    assert [s.request.turn for s in stub.seen] == [0, 1] and stub.seen[0].request.node == "impl"


def test_api_errors_reach_the_cli_as_the_api_sends_them(
    claude_bin: str, env: Env, tmp_path: Path
) -> None:
    script = build(
        {"rules": [
            {"name": "down", "when": {"call": [1]}, "error": {"status": 529, "retry_after": 0}},
            {"name": "up", "reply": "recovered"},
        ]},
        "s",
    )  # fmt: skip
    with StubModel(script).serve() as stub:
        got = claude(claude_bin, stub.url, env(), tmp_path)
    assert got["result"] == "recovered" and [s.status for s in stub.seen] == [529, 200]


def test_omg_stub_model_serves_a_script_until_stopped(
    claude_bin: str, env: Env, tmp_path: Path
) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("rules:\n  - name: hello\n    reply: hello from the script\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "omg", "stub-model", str(script)], env=env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("export ANTHROPIC_BASE_URL=http://127.0.0.1:")
        url = line.split()[1].split("=", 1)[1]
        got = claude(claude_bin, url, env(), tmp_path)
        assert got["result"] == "hello from the script"
        time.sleep(0.5)
    finally:
        proc.send_signal(2)
        _, err = proc.communicate(timeout=10)
    assert "200 node - call 1 turn 0: hello" in err and "stopped" in err
    assert os.environ.get("ANTHROPIC_BASE_URL") != url


def test_a_turns_usage_is_reported_as_the_messages_api_words_it(tmp_path: Path) -> None:
    """Cache reads and writes, the part written for an hour, web searches, speed and region:
    what the CLI prices an answer by (tests/modelproxy/test_prices_cli.py checks the prices)."""
    script = tmp_path / "s.yaml"
    script.write_text(
        "rules:\n  - name: priced\n    turns:\n      - text: hi\n        usage: {input_tokens: 5, "
        "output_tokens: 6, cache_creation_input_tokens: 30, cache_creation_1h_input_tokens: 20, "
        "cache_read_input_tokens: 7, web_search_requests: 2, speed: fast, inference_geo: us}\n"
    )
    stub = StubModel(load(script))
    rule, request = stub.answer({}, {"messages": [{"role": "user", "content": "go"}]})
    assert stub.message(rule, request, "claude-opus-5-5")["usage"] == {
        "input_tokens": 5,
        "output_tokens": 6,
        "cache_creation_input_tokens": 30,
        "cache_read_input_tokens": 7,
        "cache_creation": {"ephemeral_1h_input_tokens": 20, "ephemeral_5m_input_tokens": 10},
        "server_tool_use": {"web_search_requests": 2},
        "speed": "fast",
        "inference_geo": "us",
    }
    script.write_text("rules:\n  - name: x\n    turns:\n      - {text: hi, usage: {speed: warp}}\n")
    with pytest.raises(GraphError, match="speed"):
        load(script)
