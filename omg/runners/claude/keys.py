"""claude's model key in omg's hands: which key omg's proxy holds for it, and the CLI pointed
at the proxy with one execution's placeholder in that key's place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from omg.runners import keys
from omg.runners.claude.config import AUTH
from omg.runners.keys import HeldKey

if TYPE_CHECKING:
    from omg.modelproxy.executions import Pricer

#: The variable that moves the CLI's API (a rehearsal's stub; omg's proxy for every execution).
BASE_URL = "ANTHROPIC_BASE_URL"
#: The key variables in the order the CLI prefers them: a bearer token, an API key, an OAuth
#: token (a subscription's). The placeholder is given in the variable the key came in, so the
#: CLI presents it in the same form (``x-api-key`` or ``Authorization: Bearer``).
PREFERRED = ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")


def hold_key(parent: Mapping[str, str]) -> HeldKey | None:
    """The key ``parent`` gives claude and the API it opens (``ANTHROPIC_BASE_URL``, else
    Anthropic's); None when no key variable is set (a stored login: the CLI goes direct)."""
    from omg.modelproxy.upstream import ANTHROPIC

    return keys.hold(parent, "messages", PREFERRED, BASE_URL, ANTHROPIC)


def keyless(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without claude's key variables."""
    return keys.without(env, AUTH)


def through_proxy(
    env: Mapping[str, str], held: HeldKey, url: str, placeholder: str
) -> dict[str, str]:
    """``env`` pointing claude at omg's proxy at ``url``, ``placeholder`` its only key."""
    return keys.pointed(env, AUTH, held, url, placeholder)


def pricer(model: str | None, prices: Mapping[str, Mapping[str, float]]) -> Pricer:
    """What an answer costs: the pinned CLI's own price table (the graph's ``prices:`` are
    for runtimes that report tokens only)."""
    from omg.runners.claude.prices import price

    return price
