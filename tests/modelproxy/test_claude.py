"""The real claude CLI through the proxy, given only a placeholder key: a session works, the
stub model sees omg's key and never the placeholder, the CLI and its tools never see omg's key,
a key of no running execution or an execution past its ceiling is refused at once with omg's
words, and the API's own errors still reach the CLI's retries."""

from __future__ import annotations

from pathlib import Path

from canaries import Search

from omg.modelproxy import ModelProxy
from omg.modelproxy.executions import Grant
from omg.runners.claude.prices import price as claude_price
from omg.stubmodel import StubModel

from .conftest import ANTHROPIC_KEY, run_claude, script

DUMPS_ENV = {"name": "dump", "turns": [
    {"tool": "Bash", "input": {"command": "env > seen-env.txt"}}, {"text": "DONE"},
]}  # fmt: skip


def heard(stub: StubModel, name: str) -> list[str]:
    """The values of header ``name`` in every request the stub model got."""
    return [v for s in stub.seen for k, v in s.headers if k.lower() == name]


def test_a_session_works_with_a_placeholder_and_the_model_sees_omgs_key(
    stub: StubModel, proxy: ModelProxy, repo: Path, claude_bin: str
) -> None:
    script(stub, DUMPS_ENV)
    grant = proxy.register("anthropic", label="impl", pricer=claude_price, ceiling=5.0)
    ran = run_claude(grant, repo, "go", "--allowedTools", "Bash", "--max-budget-usd", "5")
    result = ran.result()
    assert result["is_error"] is False and result["result"] == "DONE", result
    assert [s.status for s in stub.seen] == [200, 200]
    assert heard(stub, "x-api-key") == [ANTHROPIC_KEY, ANTHROPIC_KEY]
    assert not any(grant.placeholder in v for s in stub.seen for _, v in s.headers)
    dumped = (repo / "seen-env.txt").read_text()
    assert f"ANTHROPIC_API_KEY={grant.placeholder}" in dumped  # the tools hold the placeholder
    search = Search({"the real key": ANTHROPIC_KEY})
    search.text("the tools' environment", dumped)
    search.text("the CLI's output", ran.stdout + ran.stderr)
    assert not search.leaks, search.report()
    record = proxy.finish(grant)
    assert record["requests"] == 2 and record["refused"] == 0 and record["unpriced"] == 0
    assert record["usage"]["input_tokens"] > 0
    assert abs(record["cost_usd"] - result["total_cost_usd"]) < 1e-12  # omg's count = the CLI's


def test_an_oauth_token_goes_on_as_a_bearer_token(
    stub: StubModel, proxy: ModelProxy, repo: Path, claude_bin: str
) -> None:
    script(stub, {"name": "r", "reply": "OK"})
    grant = proxy.register("anthropic", label="impl", pricer=claude_price)
    ran = run_claude(grant, repo, oauth=True)
    assert ran.result()["result"] == "OK"
    assert heard(stub, "authorization") == [f"Bearer {ANTHROPIC_KEY}"]
    assert heard(stub, "x-api-key") == []
    assert "oauth-2025-04-20" in heard(stub, "anthropic-beta")[0]  # the CLI's own, passed on


def test_a_key_of_no_running_execution_fails_the_cli_at_once_with_omgs_words(
    stub: StubModel, proxy: ModelProxy, repo: Path, claude_bin: str
) -> None:
    script(stub, {"name": "r", "reply": "OK"})
    forged = Grant("x", "anthropic", proxy.url("anthropic"), "omg-" + "A" * 43)
    ran = run_claude(forged, repo)
    result = ran.result()
    assert result["is_error"] is True
    assert "omg: this key is not one omg gave a running execution" in result["result"]
    assert proxy.strays == {"unknown": 1}  # one request: the CLI did not retry
    assert stub.seen == []

    finished = proxy.register("anthropic", label="done", pricer=claude_price)
    proxy.finish(finished)
    result = run_claude(finished, repo).result()
    assert result["is_error"] is True and "has finished" in result["result"]
    record = proxy.record(finished)
    assert record["requests"] == 0 and [r["why"] for r in record["refusals"]] == ["finished"]
    assert stub.seen == []


def test_an_execution_past_its_ceiling_is_refused_its_next_request(
    stub: StubModel, proxy: ModelProxy, repo: Path, claude_bin: str
) -> None:
    """The first answer costs $0.024 of a $0.01 ceiling: the second request is refused and the
    CLI stops, though its own --max-budget-usd is $100."""
    turns = [
        {"tool": "Bash", "input": {"command": "true"},
         "usage": {"input_tokens": 1000, "output_tokens": 1000}},
        {"text": "DONE"},
    ]  # fmt: skip
    script(stub, {"name": "costly", "turns": turns})
    grant = proxy.register("anthropic", label="impl", pricer=claude_price, ceiling=0.01)
    ran = run_claude(
        grant, repo, "go", "--allowedTools", "Bash", "--max-budget-usd", "100",
        "--model", "claude-opus-5-5",
    )  # fmt: skip
    result = ran.result()
    assert result["is_error"] is True
    assert "omg: this execution has spent $0.0240 of the $0.0100" in result["result"]
    assert len(stub.seen) == 1
    record = proxy.finish(grant)
    assert record["requests"] == 1 and record["refused"] == 1 and record["budget_exceeded"]
    assert abs(record["cost_usd"] - 0.024) < 1e-12


def test_a_ceiling_asked_before_each_request_is_asked_again(
    stub: StubModel, proxy: ModelProxy, repo: Path, claude_bin: str
) -> None:
    """A spend cap's room shrinks while the execution runs (another execution spent)."""
    turns = [{"tool": "Bash", "input": {"command": "true"}}, {"text": "DONE"}]
    script(stub, {"name": "two", "turns": turns})
    room = iter([5.0, 0.0])
    grant = proxy.register(
        "anthropic", label="impl", pricer=claude_price, ceiling=lambda: next(room)
    )
    result = run_claude(grant, repo, "go", "--allowedTools", "Bash").result()
    assert result["is_error"] is True and "of the $0.0000 it may spend" in result["result"]
    assert proxy.finish(grant)["budget_exceeded"]


def test_the_apis_own_errors_pass_through_to_the_clis_retries(
    stub: StubModel, proxy: ModelProxy, repo: Path, claude_bin: str
) -> None:
    script(
        stub,
        {"name": "busy", "when": {"call": 1}, "error": {"status": 429, "retry_after": 0}},
        {"name": "down", "when": {"call": 2}, "error": {"status": 529}},
        {"name": "ok", "reply": "OK"},
    )
    grant = proxy.register("anthropic", label="impl", pricer=claude_price)
    ran = run_claude(grant, repo)
    assert ran.result()["result"] == "OK"
    retries = [e["error_status"] for e in ran.events() if e.get("subtype") == "api_retry"]
    assert retries == [429, 529]
    assert [s.status for s in stub.seen] == [429, 529, 200]
    assert proxy.finish(grant)["requests"] == 3
