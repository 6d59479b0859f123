"""The model key an agent runtime's CLI would be given, held for omg's proxy instead; and the
CLI's environment without it, or pointed at the proxy with a placeholder in its place."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omg.modelproxy.upstream import Upstream
    from omg.modelproxy.usage import Api


@dataclass(frozen=True)
class HeldKey:
    """A model key omg's proxy holds for one runtime: the API it opens (with the key), the
    variable the runtime's CLI is given an execution's placeholder in, and the variable that
    points the CLI at an API."""

    upstream: Upstream
    variable: str
    base_url: str


def hold(
    parent: Mapping[str, str],
    api: Api,
    variables: tuple[str, ...],
    base_url: str,
    default: str,
    given_in: str | None = None,
) -> HeldKey | None:
    """The first of ``variables`` set in ``parent`` and the API it opens (``base_url``'s
    value, else ``default``); the placeholder goes in ``given_in`` (None: the same variable).
    None when none is set; a ValueError names the variable that cannot be used (never the
    key)."""
    from omg.modelproxy.upstream import Upstream

    for var in variables:
        key = parent.get(var, "").strip()
        if key:
            url = parent.get(base_url, "").strip() or default
            try:
                return HeldKey(Upstream(api, url, key), given_in or var, base_url)
            except ValueError as exc:
                raise ValueError(f"{var} / {base_url}: {exc}") from None
    return None


def without(env: Mapping[str, str], variables: tuple[str, ...]) -> dict[str, str]:
    """``env`` without the key ``variables``."""
    return {k: v for k, v in env.items() if k not in variables}


def pointed(
    env: Mapping[str, str], variables: tuple[str, ...], held: HeldKey, url: str, placeholder: str
) -> dict[str, str]:
    """``env`` without the key ``variables``, its API at ``url`` and ``placeholder`` its key."""
    out = without(env, variables)
    out[held.base_url] = url
    out[held.variable] = placeholder
    return out
