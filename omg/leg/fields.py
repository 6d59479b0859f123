"""Pure: a structured reply's fields as the checks read them — ``output_equals`` judged, and
the findings a feedback arc hands back (the ``feedback.findings`` field as JSON, not prose)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from omg import replyschema

if TYPE_CHECKING:
    from omg.graph.model import Node
    from omg.runners.base import Output

#: The characters of a field's value a failed check's detail quotes.
SHOWN = 120


def findings(node: Node, out: Output) -> str:
    """What a feedback arc hands back of ``out``: a structured reply's findings field as JSON
    text (its whole reply without one), else the reply's text."""
    if node.schema is None or out.structured is None:
        return out.result
    value = json.loads(out.structured)
    fb = node.feedback
    if fb is not None and fb.findings is not None:
        try:
            value = replyschema.get(value, fb.findings)
        except KeyError:
            return "null"
    return json.dumps(value, ensure_ascii=False, indent=2)


def unequal(pairs: Sequence[tuple[str, str]], structured: str | None) -> str:
    """Why ``output_equals`` fails (each field that differs, as found and as wanted), or ""."""
    if structured is None:
        return "the reply is not structured"
    value = json.loads(structured)
    wrong = []
    for path, want_text in pairs:
        want = json.loads(want_text)
        try:
            got: Any = replyschema.get(value, path)
        except KeyError:
            wrong.append(f"{path} is absent, want {_shown(want)}")
            continue
        if not _same(got, want):
            wrong.append(f"{path} is {_shown(got)}, want {_shown(want)}")
    return "; ".join(wrong)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 equals 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    numbers = isinstance(a, int | float) and isinstance(b, int | float)
    return (numbers or type(a) is type(b)) and bool(a == b)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN else text[:SHOWN] + " …"
