"""Substitution: a fragment's `{{ with.NAME }}` points replaced by the values a `with:` binds."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

WITH = re.compile(r"\{\{\s*with\.([A-Za-z0-9._-]+)\s*\}\}")
#: Any `{{ with… }}`, well formed or not: none belongs in a graph's own nodes.
WITH_ANY = re.compile(r"\{\{\s*with\b[^{}]*\}\}")


def substitute(value: Any, binds: Mapping[str, object]) -> Any:
    """``value`` with every ``{{ with.x }}`` replaced; a bound value is never scanned again.

    The whole scalar keeps the bound value's type; embedded, the value is written as text."""
    if isinstance(value, list):
        return [substitute(v, binds) for v in value]
    if isinstance(value, Mapping):
        return {k: substitute(v, binds) for k, v in value.items()}
    if not isinstance(value, str) or "with" not in value:
        return value
    whole = WITH.fullmatch(value.strip())
    if whole is not None and whole.group(1) in binds:
        return copy.deepcopy(binds[whole.group(1)])
    return WITH.sub(
        lambda m: _text(binds[m.group(1)]) if m.group(1) in binds else m.group(0), value
    )


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
