"""Dollars for codex's tokens: only from the prices the user gives (USD per million tokens,
per model); without one the cost is unknown, never $0."""

from __future__ import annotations

from collections.abc import Mapping

#: The price entry a node without ``model:`` is priced by (the CLI's own default model).
DEFAULT_KEY = "default"


def price(
    usage: Mapping[str, int], model: str | None, prices: Mapping[str, Mapping[str, float]]
) -> float | None:
    """What ``usage`` cost at ``prices[model]`` (``input``, ``cached_input``, ``output`` per
    million tokens; cached input at the input rate when not given), or None when unpriced."""
    rates = prices.get(model or DEFAULT_KEY)
    if rates is None:
        return None
    cached = usage.get("cached_input_tokens", 0)
    fresh = max(0, usage.get("input_tokens", 0) - cached)
    out = usage.get("output_tokens", 0)
    per = rates.get("input", 0.0)
    total = fresh * per + cached * rates.get("cached_input", per) + out * rates.get("output", 0.0)
    return total / 1_000_000
