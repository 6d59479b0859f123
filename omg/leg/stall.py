"""A stalled loop: whether a feedback round changed nothing (findings or lanes), pure."""

from __future__ import annotations

import re
from collections.abc import Mapping

#: Markdown decoration dropped before findings are compared: a line's heading, quote and list
#: marks, then every emphasis, code, strike and table character anywhere.
_LINE_MARKS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*+][ \t]+|\d{1,9}[.)][ \t]+)+", re.M)
_INLINE_MARKS = re.compile(r"[*_`~|]")
_SPACE = re.compile(r"\s+")


def normalized(findings: str) -> str:
    """``findings`` as the no-progress rule compares them: Markdown decoration dropped (line
    marks ``#`` ``>`` ``-`` ``*`` ``+`` ``1.`` ``1)``, then ``*`` ``_`` `````` ``~`` ``|``),
    case folded, every run of whitespace one space, the ends trimmed."""
    text = _LINE_MARKS.sub("", findings)
    text = _INLINE_MARKS.sub("", text)
    return _SPACE.sub(" ", text.casefold()).strip()


def stalled(
    previous: str | None,
    findings: str,
    trees_then: Mapping[str, str] | None,
    trees_now: Mapping[str, str],
) -> str:
    """Why the round that just failed made no progress ("" when it did).

    ``previous`` is the declarer's findings of the round before (None: there was none);
    ``trees_then`` the trees of the re-run path's lanes when that round began (None: not
    recorded), ``trees_now`` the same lanes' trees now.
    """
    why = []
    if trees_then and trees_now and dict(trees_then) == dict(trees_now):
        lanes = ", ".join(sorted(trees_now))
        why.append(
            f"the re-run path left its lane{'s' if len(trees_now) > 1 else ''} ({lanes}) "
            "exactly as the previous round did (the same tree)"
        )
    before = "" if previous is None else normalized(previous)
    if before and before == normalized(findings):
        why.append("the findings repeat the previous round's (same text after normalising)")
    return ", and ".join(why)
