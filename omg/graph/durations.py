"""Durations: the `30s`, `2m`, `1h30m` strings graph files use for timeouts and backoff."""

from __future__ import annotations

import re
from functools import lru_cache

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | int | float) -> float:
    """Return seconds for a duration like ``90s``, ``2m``, ``1h30m`` or a bare number of seconds.

    Raises ValueError with a message naming the value and the accepted forms.
    """
    if isinstance(text, bool):
        raise ValueError(f"invalid duration {text!r} (want a duration like 30s, 2m, 1h30m)")
    if isinstance(text, (int, float)):
        return float(text)
    return _parse_text(text)


@lru_cache(maxsize=256)  # a graph repeats a few durations over its nodes
def _parse_text(text: str) -> float:
    s = text.strip()
    if not s:
        raise ValueError("empty duration (want a duration like 30s, 2m, 1h30m)")
    pos = 0
    total = 0.0
    for m in _PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _SECONDS[m.group(2)]
        pos = m.end()
    if pos != len(s):
        raise ValueError(f"invalid duration {text!r} (want a duration like 30s, 2m, 1h30m)")
    return total


def format_duration(seconds: float) -> str:
    """Render seconds compactly for tables: ``850ms``, ``12.3s``, ``4m05s``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
