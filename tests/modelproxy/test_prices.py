"""The claude price table and the CLI's pricing rule (pure); that the table matches the pinned
CLI itself is tests/modelproxy/test_prices_cli.py's."""

from __future__ import annotations

import math

import pytest

from omg.modelproxy.usage import Usage
from omg.runners.claude.prices import FAST, MODELS, TIERS, price

M = 1_000_000


def answer(model: str, speed: str = "", geo: str = "", **counts: int) -> Usage:
    return Usage("messages", model, counts, speed, geo)


CASES = [
    ("input", answer("claude-opus-5-5", input_tokens=M), 4.0),
    ("output", answer("claude-opus-5-5", output_tokens=M), 20.0),
    ("cache read", answer("claude-opus-5-5", cache_read_input_tokens=M), 0.2),
    ("cache write, five minutes", answer("claude-opus-5-5", cache_creation_input_tokens=M), 5.0),
    (
        "cache write, a quarter for an hour",
        answer(
            "claude-opus-5-5",
            cache_creation_input_tokens=M,
            cache_creation_1h_input_tokens=M // 4,
        ),
        0.75 * 5 + 0.25 * 8,
    ),
    (
        "an hour's part past the whole is the whole",
        answer(
            "claude-opus-5-5", cache_creation_input_tokens=M, cache_creation_1h_input_tokens=3 * M
        ),
        8.0,
    ),
    ("a dated id", answer("claude-sonnet-4-5-20250929", input_tokens=M), 3.0),
    (
        "a prompt at the long-prompt threshold",
        answer("claude-haiku-5-5", input_tokens=100_000),
        0.01,
    ),
    (
        "a prompt past it, cached parts counted",
        answer("claude-haiku-5-5", input_tokens=99_999, cache_read_input_tokens=2, output_tokens=M),
        99_999 / M * 0.5 + 2 / M * 0.05 + 2.5,
    ),
    ("fast", answer("claude-opus-4-6", "fast", input_tokens=M), 30.0),
    ("fast, a model without a fast mode", answer("claude-sonnet-4-5", "fast", input_tokens=M), 3.0),
    ("standard speed", answer("claude-opus-4-6", "standard", input_tokens=M), 5.0),
    (
        "US only: tokens times 1.1, searches not",
        answer("claude-opus-4-5", geo="us", input_tokens=M, web_search_requests=2),
        5.5 + 0.02,
    ),
    ("another region", answer("claude-opus-4-5", geo="eu", input_tokens=M), 5.0),
]


@pytest.mark.parametrize(("case", "usage", "dollars"), CASES, ids=[c[0] for c in CASES])
def test_an_answer_is_priced_by_its_models_rates(case: str, usage: Usage, dollars: float) -> None:
    got = price(usage)
    assert got is not None and math.isclose(got, dollars, rel_tol=1e-12), (case, got)


@pytest.mark.parametrize(
    "usage",
    [
        answer("claude-unknown-9", input_tokens=M),
        answer("claude-opus-4-1", input_tokens=M),  # retired: the CLI asks for today's Opus
        answer("", input_tokens=M),
        Usage("responses", "claude-opus-5-5", {"input_tokens": M}),
    ],
)
def test_an_answer_the_table_cannot_price_has_no_price(usage: Usage) -> None:
    assert price(usage) is None


def test_every_model_names_a_tier_and_fast_rates_the_table_holds() -> None:
    for name, model in MODELS.items():
        assert model.tier in TIERS, name
        assert model.fast is None or model.fast in FAST, name
    assert {m.tier for m in MODELS.values()} == set(TIERS)  # no tier left unused
    assert {m.fast for m in MODELS.values()} - {None} == set(FAST)
