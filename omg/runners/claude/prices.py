"""Pure: what a claude answer costs — the price table per model, and pricing as the CLI does.

Source of every price: the model catalog compiled into the pinned claude CLI, 2.1.332 (its
``pricing_tiers``, each model's ``pricing`` tier, and its fast-mode rates for the models that
have a fast mode). Each model below names its tier as the catalog does. The figures are the
list prices in US dollars per million tokens (a web search: dollars per search), as the CLI
prices an answer for its ``total_cost_usd``; ``tests/modelproxy/test_prices_cli.py`` runs
that CLI against the stub model with known usage for every model here and checks the two
agree, so a new CLI pin that changes a price fails the suite rather than drifting.

How an answer is priced (the CLI's own rule): input, output and cache reads at their rates;
cache writes at the five-minute rate, except the part written for an hour at the hour rate;
a prompt over a tier's long-prompt threshold (input plus cache reads and writes) at the
long-prompt rates; ``speed: fast`` at the model's fast rates when it has them; the tokens'
cost times 1.1 for ``inference_geo: us``; web searches added at their own price.
"""

from __future__ import annotations

from dataclasses import dataclass

from omg.modelproxy.usage import Usage

#: The CLI's surcharge for an answer served in the US only (``inference_geo: us``).
US_ONLY = 1.1
#: The price of one web search, in dollars (every tier of the catalog: $10 a thousand).
WEB_SEARCH = 0.01


@dataclass(frozen=True)
class Rates:
    """Dollars per million tokens."""

    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float


@dataclass(frozen=True)
class Tier:
    """A catalog tier: its rates, and the rates past a long-prompt threshold if it has one."""

    rates: Rates
    long_prompt: tuple[int, Rates] | None = None


#: The catalog's pricing tiers, by the catalog's names.
TIERS: dict[str, Tier] = {
    "haiku_35": Tier(Rates(0.8, 4, 1, 1.6, 0.08)),
    "haiku_45": Tier(Rates(1, 5, 1.25, 2, 0.1)),
    "haiku_55": Tier(Rates(0.1, 0.5, 0.125, 0.2, 0.01), (100_000, Rates(0.5, 2.5, 0.625, 1, 0.05))),
    "tier_2_10": Tier(Rates(2, 10, 2.5, 4, 0.2)),
    "tier_2_10_cache_read_0_10": Tier(Rates(2, 10, 2.5, 4, 0.1)),
    "tier_3_15": Tier(Rates(3, 15, 3.75, 6, 0.3)),
    "tier_4_20_cache_read_0_20": Tier(Rates(4, 20, 5, 8, 0.2)),
    "tier_5_25": Tier(Rates(5, 25, 6.25, 10, 0.5)),
    "tier_8_40_cache_read_0_20": Tier(Rates(8, 40, 10, 16, 0.2)),
    "tier_10_50": Tier(Rates(10, 50, 12.5, 20, 1)),
    "tier_10_50_cache_read_0_25": Tier(Rates(10, 50, 12.5, 20, 0.25)),
}

#: The CLI's fast-mode rates, named for the models that introduced each.
FAST: dict[str, Rates] = {
    "fast_opus_4_6": Rates(30, 150, 37.5, 60, 3),
    "fast_opus_4_8": Rates(10, 50, 12.5, 20, 1),
    "fast_opus_5_5": Rates(8, 40, 10, 16, 0.4),
    "fast_fable_5_2": Rates(16, 80, 20, 32, 0.4),
}


@dataclass(frozen=True)
class Model:
    """A model of the catalog: its tier, its fast rates if it has a fast mode, and the dated
    ids the API also answers with."""

    tier: str
    fast: str | None = None
    dated: tuple[str, ...] = ()


#: Every model of the catalog the CLI asks for, by its id. (Opus 4 and 4.1 are not here: the
#: pinned CLI, asked for either, asks for its current Opus instead, so no answer names them.)
MODELS: dict[str, Model] = {
    "claude-3-5-haiku": Model("haiku_35", dated=("claude-3-5-haiku-20241022",)),
    "claude-haiku-4-5": Model("haiku_45", dated=("claude-haiku-4-5-20251001",)),
    "claude-haiku-5-5": Model("haiku_55"),
    "claude-3-5-sonnet": Model("tier_3_15", dated=("claude-3-5-sonnet-20241022",)),
    "claude-3-7-sonnet": Model("tier_3_15", dated=("claude-3-7-sonnet-20250219",)),
    "claude-sonnet-4-0": Model("tier_3_15", dated=("claude-sonnet-4-20250514",)),
    "claude-sonnet-4-5": Model("tier_3_15", dated=("claude-sonnet-4-5-20250929",)),
    "claude-sonnet-4-6": Model("tier_3_15"),
    "claude-sonnet-5": Model("tier_2_10"),
    "claude-sonnet-5-5": Model("tier_2_10_cache_read_0_10"),
    "claude-opus-4-5": Model("tier_5_25", dated=("claude-opus-4-5-20251101",)),
    "claude-opus-4-6": Model("tier_5_25", fast="fast_opus_4_6"),
    "claude-opus-4-7": Model("tier_5_25", fast="fast_opus_4_6"),
    "claude-opus-4-8": Model("tier_5_25", fast="fast_opus_4_8"),
    "claude-opus-5": Model("tier_5_25", fast="fast_opus_4_8"),
    "claude-opus-5-5": Model("tier_4_20_cache_read_0_20", fast="fast_opus_5_5"),
    "claude-fable-5": Model("tier_10_50"),
    "claude-fable-5-1": Model("tier_10_50_cache_read_0_25"),
    "claude-fable-5-2": Model("tier_8_40_cache_read_0_20", fast="fast_fable_5_2"),
    "claude-mythos-5": Model("tier_10_50"),
    "claude-mythos-5-1": Model("tier_10_50_cache_read_0_25"),
    "claude-mythos-5-2": Model("tier_8_40_cache_read_0_20", fast="fast_fable_5_2"),
}

#: Every id an answer may name, the dated ones too, to its model's id.
_IDS = {alias: name for name, m in MODELS.items() for alias in (name, *m.dated)}


def model_of(name: str) -> Model | None:
    """The catalog's model an answer names (its id, or a dated id of it), if it is one."""
    found = _IDS.get(name)
    return MODELS[found] if found is not None else None


def rates_for(model: Model, usage: Usage) -> Rates:
    """The rates one answer of ``model`` is priced at."""
    tier = TIERS[model.tier]
    if usage.speed == "fast" and model.fast is not None:
        return FAST[model.fast]
    c = usage.counts
    prompt = (
        c.get("input_tokens", 0)
        + c.get("cache_read_input_tokens", 0)
        + c.get("cache_creation_input_tokens", 0)
    )
    if tier.long_prompt is not None and prompt > tier.long_prompt[0]:
        return tier.long_prompt[1]
    return tier.rates


def price(usage: Usage) -> float | None:
    """What a claude answer cost in dollars; None for a model the table does not hold."""
    model = model_of(usage.model)
    if usage.api != "messages" or model is None:
        return None
    r = rates_for(model, usage)
    c = usage.counts
    written = c.get("cache_creation_input_tokens", 0)
    hour = min(max(c.get("cache_creation_1h_input_tokens", 0), 0), written)
    writes = (
        hour / 1e6 * r.cache_write_1h + (written - hour) / 1e6 * r.cache_write_5m
        if hour > 0
        else written / 1e6 * r.cache_write_5m
    )
    tokens = (
        c.get("input_tokens", 0) / 1e6 * r.input
        + c.get("output_tokens", 0) / 1e6 * r.output
        + c.get("cache_read_input_tokens", 0) / 1e6 * r.cache_read
        + writes
    )
    geo = US_ONLY if usage.geo == "us" else 1.0
    return tokens * geo + c.get("web_search_requests", 0) * WEB_SEARCH
