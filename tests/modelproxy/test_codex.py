"""The real codex CLI through the proxy, given only a placeholder key in omg's provider: a
thread works, the stub model sees omg's key and never the placeholder, codex's commands never
see omg's key, a key of no running execution or an execution past its ceiling is refused at
once with omg's words, and the API's own errors still reach codex's retries."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from canaries import Search

from omg.modelproxy import ModelProxy, Usage
from omg.modelproxy.executions import Grant
from omg.runners.codex import cost
from omg.stubmodel import StubModel

from .conftest import OPENAI_KEY, run_codex, script

#: The graph's prices: (USD per million tokens), as a graph's ``prices:`` holds them.
PRICES: Mapping[str, Mapping[str, float]] = {
    "default": {"input": 1.25, "cached_input": 0.125, "output": 10.0}
}


def graph_prices(used: Usage) -> float | None:
    """A codex execution's pricer: the graph's prices, as omg prices codex's own report."""
    return cost.price(used.counts, None, PRICES)


DUMPS_ENV = {"name": "dump", "turns": [
    {"tool": "exec_command", "input": {"cmd": "env > seen-env.txt"},
     "usage": {"input_tokens": 1000, "cached_tokens": 400, "output_tokens": 100}},
    {"text": "DONE"},
]}  # fmt: skip


def turn_failed(ran_stdout: str) -> str:
    return next((line for line in ran_stdout.splitlines() if '"turn.failed"' in line), "")


def test_a_thread_works_with_a_placeholder_and_the_model_sees_omgs_key(
    stub: StubModel, proxy: ModelProxy, repo: Path, codex_bin: str
) -> None:
    script(stub, DUMPS_ENV)
    grant = proxy.register("openai", label="impl", pricer=graph_prices, ceiling=5.0)
    ran = run_codex(grant, repo)
    assert ran.code == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    messages = [e["item"]["text"] for e in ran.events() if e.get("type") == "item.completed"
                and e["item"].get("type") == "agent_message"]  # fmt: skip
    assert messages[-1] == "DONE"
    assert [s.status for s in stub.seen] == [200, 200]
    auth = [v for s in stub.seen for k, v in s.headers if k.lower() == "authorization"]
    assert auth == [f"Bearer {OPENAI_KEY}"] * 2
    assert not any(grant.placeholder in v for s in stub.seen for _, v in s.headers)
    search = Search({"the real key": OPENAI_KEY})
    search.text("the commands' environment", (repo / "seen-env.txt").read_text())
    search.text("the CLI's output", ran.stdout + ran.stderr)
    assert not search.leaks, search.report()
    record = proxy.finish(grant)
    assert record["requests"] == 2 and record["unpriced"] == 0 and record["refused"] == 0
    completed = [e for e in ran.events() if e.get("type") == "turn.completed"][-1]["usage"]
    for name in ("input_tokens", "cached_input_tokens", "output_tokens"):
        assert record["usage"][name] == completed[name]  # omg's count = codex's own
    assert abs(record["cost_usd"] - graph_prices(Usage("responses", "", completed))) < 1e-12


def test_a_key_of_no_running_execution_fails_codex_at_once_with_omgs_words(
    stub: StubModel, proxy: ModelProxy, repo: Path, codex_bin: str
) -> None:
    script(stub, {"name": "r", "reply": "OK"})
    forged = Grant("x", "openai", proxy.url("openai"), "omg-" + "B" * 43)
    ran = run_codex(forged, repo)
    assert ran.code == 1
    assert "omg: this key is not one omg gave a running execution" in turn_failed(ran.stdout)
    assert proxy.strays == {"unknown": 1}  # one request: codex did not reconnect
    assert stub.seen == []

    finished = proxy.register("openai", label="done", pricer=graph_prices)
    proxy.finish(finished)
    ran = run_codex(finished, repo)
    assert ran.code == 1 and "has finished" in turn_failed(ran.stdout)
    record = proxy.record(finished)
    assert record["requests"] == 0 and [r["why"] for r in record["refusals"]] == ["finished"]
    assert stub.seen == []


def test_an_execution_past_its_ceiling_is_refused_its_next_request(
    stub: StubModel, proxy: ModelProxy, repo: Path, codex_bin: str
) -> None:
    script(stub, DUMPS_ENV)  # the first answer costs $0.00180 of a $0.001 ceiling
    grant = proxy.register("openai", label="impl", pricer=graph_prices, ceiling=0.001)
    ran = run_codex(grant, repo)
    assert ran.code == 1
    assert "omg: this execution has spent $0.0018 of the $0.0010" in turn_failed(ran.stdout)
    assert len(stub.seen) == 1
    record = proxy.finish(grant)
    assert record["requests"] == 1 and record["refused"] == 1 and record["budget_exceeded"]


def test_a_token_ceiling_holds_an_execution_whose_price_is_unknown(
    stub: StubModel, proxy: ModelProxy, repo: Path, codex_bin: str
) -> None:
    script(stub, DUMPS_ENV)
    grant = proxy.register("openai", label="impl", pricer=lambda _: None, ceiling_tokens=500)
    ran = run_codex(grant, repo)
    assert "omg: this execution has used 1100 tokens" in turn_failed(ran.stdout)
    record = proxy.finish(grant)
    assert record["unpriced"] == 1 and [r["why"] for r in record["refusals"]] == ["tokens"]


def test_an_outage_passes_through_to_codexs_retry(
    stub: StubModel, proxy: ModelProxy, repo: Path, codex_bin: str
) -> None:
    script(
        stub,
        {"name": "down", "when": {"call": 1}, "error": {"status": 500}},
        {"name": "ok", "reply": "OK"},
    )
    grant = proxy.register("openai", label="impl", pricer=graph_prices)
    ran = run_codex(grant, repo)
    assert ran.code == 0, ran.stdout[-2000:]
    assert [s.status for s in stub.seen] == [500, 200]
    assert proxy.finish(grant)["requests"] == 2
