"""Spend: one execution's cost as one value, the same on the way into an event and out of it."""

from __future__ import annotations

from typing import Any

import pytest

from omg.spend import Spend, SpendFields, summed

TOKENS = {"input_tokens": 12, "output_tokens": 3}


@pytest.mark.parametrize(
    ("spend", "fields"),
    [
        (
            Spend(),
            {
                "cost_usd": 0.0,
                "cost_unknown": None,
                "usage": None,
                "session_cost_usd": None,
                "cost_anomaly": None,
            },
        ),
        (
            Spend(0.25, False, TOKENS, 1.5),
            {
                "cost_usd": 0.25,
                "cost_unknown": None,
                "usage": TOKENS,
                "session_cost_usd": 1.5,
                "cost_anomaly": None,
            },
        ),
        (
            Spend(cost_unknown=True),
            {
                "cost_usd": 0.0,
                "cost_unknown": True,
                "usage": None,
                "session_cost_usd": None,
                "cost_anomaly": None,
            },
        ),
    ],
)
def test_a_spend_is_written_as_its_event_fields_and_read_back(
    spend: Spend, fields: SpendFields
) -> None:
    assert spend.fields() == fields
    event = {k: v for k, v in fields.items() if v is not None}  # the recorder drops None
    assert Spend.of_event(event) == spend


@pytest.mark.parametrize(
    ("event", "cost"),
    [({}, 0.0), ({"cost_usd": None}, 0.0), ({"cost_usd": 2}, 2.0), ({"usage": "junk"}, 0.0)],
)
def test_an_event_without_a_cost_spent_nothing(event: dict[str, Any], cost: float) -> None:
    spend = Spend.of_event(event)
    assert spend.cost_usd == cost and type(spend.cost_usd) is float
    assert spend.usage == {}


def test_usage_is_summed_kind_by_kind_and_the_spend_stays_frozen() -> None:
    total = summed(TOKENS, {"output_tokens": 4, "cache_read_input_tokens": 100})
    assert total == {"input_tokens": 12, "output_tokens": 7, "cache_read_input_tokens": 100}
    assert list(total) == ["input_tokens", "output_tokens", "cache_read_input_tokens"]
    spend = Spend(0.1, usage=TOKENS)
    assert spend.with_usage(total).usage == total and spend.usage == TOKENS
    with pytest.raises(AttributeError):
        spend.cost_usd = 9.0  # type: ignore[misc]
