"""The price table against the pinned claude CLI: for every model of the table, a session
through the proxy whose answers report known usage (cache reads and writes, an hour's cache
writes, a long prompt, web searches, fast speed, a US-only answer); the CLI's own
``total_cost_usd`` must equal the table's price, and the proxy's count must equal both."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from omg.modelproxy import ModelProxy, Usage
from omg.modelproxy.usage import messages_usage
from omg.runners.claude.prices import MODELS
from omg.runners.claude.prices import price as claude_price
from omg.stubmodel import StubModel

from .conftest import run_claude, script

#: The usage each answer of a session reports: every kind of count, none a round number, so no
#: rate can stand in for another unnoticed. The long prompt comes last: the CLI would compact
#: a conversation that big before asking again.
ANSWERS: list[dict[str, Any]] = [
    {"input_tokens": 1_234, "output_tokens": 5_678, "cache_creation_input_tokens": 50_001,
     "cache_creation_1h_input_tokens": 30_013, "cache_read_input_tokens": 7_919,
     "web_search_requests": 3},
    {"input_tokens": 10_007, "output_tokens": 20_011, "speed": "fast", "inference_geo": "us"},
    {"input_tokens": 1_000_003, "output_tokens": 200_011,
     "cache_creation_input_tokens": 300_007, "cache_read_input_tokens": 400_009},
]  # fmt: skip


def reported(answer: dict[str, Any], model: str) -> Usage:
    """The usage the stub model reports for ``answer``, as the API words it."""
    raw: dict[str, Any] = {k: v for k, v in answer.items() if not k.startswith(("cache_c", "web"))}
    raw["cache_creation_input_tokens"] = answer.get("cache_creation_input_tokens", 0)
    if "cache_creation_1h_input_tokens" in answer:
        raw["cache_creation"] = {
            "ephemeral_1h_input_tokens": answer["cache_creation_1h_input_tokens"]
        }
    if "web_search_requests" in answer:
        raw["server_tool_use"] = {"web_search_requests": answer["web_search_requests"]}
    return messages_usage(raw, model)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_table_prices_every_model_as_the_pinned_cli_does(
    stub: StubModel, proxy: ModelProxy, repo: Path, claude_bin: str, model: str
) -> None:
    turns: list[dict[str, Any]] = [
        {"tool": "Bash", "input": {"command": "true"}, "usage": answer} for answer in ANSWERS[:-1]
    ]
    turns.append({"text": "DONE", "usage": ANSWERS[-1]})
    script(stub, {"name": "priced", "turns": turns})
    grant = proxy.register("anthropic", label=model, pricer=claude_price)
    ran = run_claude(grant, repo, "go", "--allowedTools", "Bash", "--model", model)
    result = ran.result()
    assert result["is_error"] is False and len(stub.seen) == len(ANSWERS), result["result"]
    table = sum(claude_price(reported(a, model)) or math.nan for a in ANSWERS)
    assert math.isclose(result["total_cost_usd"], table, rel_tol=1e-12), (
        f"{model}: the CLI says ${result['total_cost_usd']}, the table ${table}"
    )
    record = proxy.finish(grant)
    assert record["models"] == [model]  # the CLI asked for the model itself, by this name
    assert math.isclose(record["cost_usd"], table, rel_tol=1e-12)
