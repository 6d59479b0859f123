"""Pure: JSON as omg reads its own records back, refusing what ``json.loads`` takes and no record
holds — NaN, Infinity, a number past a float's range (``1e999``), an integer past 64 bits, and
nesting deeper than Python recurses — as a ValueError saying which.

Every record omg reads back (events, state.json, the spend books, the waits, the lease, the
notes, fan-out records) goes through here, so no such number reaches a sum, an ``int()`` or an
event: a damaged record is refused where it is read, never carried on as ``Infinity``.
"""

from __future__ import annotations

import json
import math
from json.scanner import make_scanner
from typing import Any

#: The largest integer a record holds (a seq, a pid, a GitHub id): 64 bits, signed.
MAX_INT = (1 << 63) - 1


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a record holds")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is past a float's range")
    return value


def _int(text: str) -> int:
    if len(text) > 20 or abs(value := int(text)) > MAX_INT:
        raise ValueError(f"the integer {text[:40]}{'…' if len(text) > 40 else ''} is past 64 bits")
    return value


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float, parse_int=_int)
#: Event lines (``state/verify``, ``store.read_events``): NaN, Infinity and floats past their
#: range refused, integers taken as they are — a check of each would cost the record check half
#: again; an integer past 64 bits in a field the fold reads is caught there (its sum or its
#: comparison), and state.json, read with ``loads``, holds none.
_LINE = json.JSONDecoder(parse_constant=_constant, parse_float=_float)
#: ``_LINE`` as a scanner: one object at an offset of a longer text, and where it ends.
scan_line = make_scanner(_LINE)  # type: ignore[arg-type]  # the C scanner takes a decoder


def loads(data: str | bytes) -> Any:
    """The value ``data`` holds (UTF-8 when bytes); ValueError when it is not JSON or holds
    what no record does."""
    return _decode(_DECODER, data)


def line(data: str | bytes) -> Any:
    """One event line: ``loads`` without the check of each integer (see ``_LINE``)."""
    return _decode(_LINE, data)


def _decode(decoder: json.JSONDecoder, data: str | bytes) -> Any:
    text = data.decode() if isinstance(data, bytes) else data
    try:
        return decoder.decode(text)
    except RecursionError:
        raise ValueError("it is nested too deeply for any record") from None


def unfit(value: Any, at: str = "") -> str | None:
    """Where in ``value`` (``caps[0].spent_usd``) the first number no record holds is — NaN or
    an infinity, which ``json.dumps`` would write as ``NaN``/``Infinity`` — or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else at or "the value"
    if isinstance(value, dict):
        items: Any = ((f"{at}.{k}" if at else str(k), v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{at}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for where, v in items:
        found = unfit(v, where)
        if found is not None:
            return found
    return None
