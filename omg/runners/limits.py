"""Pure: a provider's limit told from an agent's failure — a subscription's usage limit or an
API rate limit — with the reset as the provider worded it (kept as text, never a clock).

Any runtime maps its errors here, so every runtime's limits pause a run the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omg.kinds import LimitKind

#: A subscription's usage window ("You've hit your session limit", "… your weekly limit").
_USAGE = re.compile(r"\bhit your (?:[\w-]+ )?limit\b", re.IGNORECASE)
#: The reset as the provider says it: "resets 3pm", "resets at 15:00 (UTC)" → "3pm".
_RESETS = re.compile(r"\bresets?\s+(?:at\s+)?([^·∙(\n]+)", re.IGNORECASE)
#: The HTTP status of a rate limit.
RATE_STATUS = 429
SAID_LIMIT = 300


@dataclass(frozen=True)
class Limit:
    """A limit that stopped an execution: which kind, what was said, and the reset's words."""

    kind: LimitKind
    said: str
    resets: str = ""  # the provider's words for when it resets ("3pm"); "" when it gave none

    def describe(self) -> str:
        what = (
            "a usage limit of the subscription" if self.kind == "session" else "an API rate limit"
        )
        when = f" (resets {self.resets}, as the provider said)" if self.resets else ""
        return f"{what}{when}: {self.said}"


def classify(said: str, status: int | None) -> Limit | None:
    """The limit ``said`` (an agent's error text) and ``status`` (the HTTP status of its last
    failed API call) report, or None when the failure is not a limit."""
    text = " ".join(said.split())[:SAID_LIMIT]
    if _USAGE.search(said):
        return Limit("session", text, resets_text(said))
    if status == RATE_STATUS:
        return Limit("rate", text, resets_text(said))
    return None


def resets_text(said: str) -> str:
    """The provider's words for the reset, trimmed; "" when it gave none."""
    m = _RESETS.search(said)
    return " ".join(m.group(1).split()).rstrip(".;,")[:80] if m else ""
