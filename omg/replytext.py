"""Pure: a structured reply's text read — the JSON value a reply holds (the inside of a fenced
block, read strictly), and findings as a set of data (what the stall stop compares)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from omg import strictjson
from omg.replyschema import EVIDENCE_MARK

_SPACE = re.compile(r"\s+")


def parse_reply(text: str) -> tuple[Any, str]:
    """The JSON value a reply's text holds, and "" — or (None, why it holds none)."""
    body = text.strip()
    if body.startswith("```"):  # a fenced block: the JSON inside it
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        return strictjson.loads(body), ""
    except ValueError as exc:
        shown = " ".join(text.split())
        shown = shown if len(shown) <= 120 else shown[:120] + " …"
        return None, f"the reply is not JSON ({exc}): {shown or '(empty)'}"


def finding_set(text: str) -> frozenset[str] | None:
    """Findings as data, for the stall stop: a payload's JSON (its verify evidence left out)
    as a set — each item of a list, else the value — every string's case and whitespace
    folded, keys sorted; None when the payload holds no JSON."""
    body = text.split(EVIDENCE_MARK, 1)[0]
    value, why = parse_reply(body)
    if why:
        return None
    items = value if isinstance(value, list) else [value]
    return frozenset(json.dumps(_folded(i), sort_keys=True) for i in items)


def _folded(value: Any) -> Any:
    if isinstance(value, str):
        return _SPACE.sub(" ", value.casefold()).strip()
    if isinstance(value, Mapping):
        return {str(k): _folded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_folded(v) for v in value]
    return value
