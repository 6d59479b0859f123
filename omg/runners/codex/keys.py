"""codex's model key in omg's hands: which key omg's proxy holds for it, and codex pointed at
the proxy (omg's provider ``base_url``: codex ignores ``OPENAI_BASE_URL``) with one
execution's placeholder as its key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from omg.runners import keys
from omg.runners.codex.config import AUTH, BASE_URL_ENV
from omg.runners.keys import HeldKey

if TYPE_CHECKING:
    from omg.modelproxy.executions import Pricer
    from omg.modelproxy.usage import Usage

#: The variable omg's provider reads its key from (``env_key``): the placeholder goes there.
KEY = "OPENAI_API_KEY"


def hold_key(parent: Mapping[str, str]) -> HeldKey | None:
    """The key ``parent`` gives codex (``OPENAI_API_KEY``, else ``CODEX_API_KEY``) and the
    Responses API it opens (``OMG_CODEX_BASE_URL``, else OpenAI's); None without one (a
    stored login: codex goes direct)."""
    from omg.modelproxy.upstream import OPENAI

    return keys.hold(parent, "responses", AUTH, BASE_URL_ENV, OPENAI, given_in=KEY)


def keyless(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without codex's key variables."""
    return keys.without(env, AUTH)


def through_proxy(
    env: Mapping[str, str], held: HeldKey, url: str, placeholder: str
) -> dict[str, str]:
    """``env`` pointing codex at omg's proxy at ``url`` (omg's ``-c`` provider flags follow
    ``OMG_CODEX_BASE_URL``), ``placeholder`` its only key."""
    return keys.pointed(env, AUTH, held, url, placeholder)


def pricer(model: str | None, prices: Mapping[str, Mapping[str, float]]) -> Pricer:
    """What an answer costs at the graph's ``prices:`` for ``model`` (None: unknown)."""
    from omg.runners.codex import cost

    def priced(used: Usage) -> float | None:
        return cost.price(used.counts, model, prices)

    return priced
