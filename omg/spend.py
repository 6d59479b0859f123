"""Spend: what one execution cost — dollars (or unknown), tokens, the session's running total.

One frozen value carries it from a runner's ``Output`` through the leg's ``Result`` to the
event (``fields``) and back out of an event into the fold (``of_event``), so the four fields
are spelled here once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TypedDict


class SpendFields(TypedDict, total=False):
    """A spend as an event carries it (None values are left out of the event)."""

    cost_usd: float
    cost_unknown: bool | None
    usage: dict[str, int] | None
    session_cost_usd: float | None
    cost_anomaly: str | None


class ProxyRecord(TypedDict):
    """What omg's model proxy saw of one agent execution (one attempt): the requests it
    forwarded, their usage and price, and the requests it refused (the first few, word for
    word), ``budget_exceeded`` when one was refused for the execution's ceiling."""

    requests: int
    models: list[str]
    usage: dict[str, int]
    cost_usd: float
    unpriced: int  # answers whose cost could not be priced
    refused: int
    refusals: list[dict[str, str]]  # {"why", "message"}
    budget_exceeded: bool


#: What a node's record keeps as the last execution reported it (the cost is summed instead).
LAST_REPORTED = ("usage", "session_cost_usd")


@dataclass(frozen=True)
class Spend:
    """One execution's spend; ``cost_unknown`` when it ended before reporting one."""

    cost_usd: float = 0.0
    cost_unknown: bool = False
    usage: Mapping[str, int] = field(default_factory=dict)  # token counts by kind
    session_cost_usd: float | None = None  # the session's cumulative cost, as the CLI said
    #: Why ``cost_usd`` cannot be what the execution really cost (it was clamped), when so.
    anomaly: str | None = None

    def resumed(self, parent_usd: float) -> Spend:
        """This spend of a resumed session, whose reported cost counts its parent's: priced by
        the difference. A session reporting less than its parent had cost cannot be priced:
        its cost is recorded as $0 and the anomaly says so, never silently."""
        reported = self.session_cost_usd
        if reported is None:
            return self
        delta = reported - parent_usd
        if delta >= 0:
            return replace(self, cost_usd=delta)
        return replace(
            self,
            cost_usd=0.0,
            anomaly=(
                f"the resumed session reported ${reported:.4f} in all, less than the "
                f"${parent_usd:.4f} its parent had cost; recorded as $0 (the real cost is "
                "unknown: check the account's usage)"
            ),
        )

    def with_usage(self, total: Mapping[str, int]) -> Spend:
        """This spend with ``total`` as its token usage."""
        return replace(self, usage=dict(total))

    def fields(self) -> SpendFields:
        """The event fields (a falsy flag or empty usage is left out, as None)."""
        return {
            "cost_usd": self.cost_usd,
            "cost_unknown": self.cost_unknown or None,
            "usage": dict(self.usage) or None,
            "session_cost_usd": self.session_cost_usd,
            "cost_anomaly": self.anomaly,
        }

    @classmethod
    def of_event(cls, ev: SpendFields) -> Spend:
        """The spend an event records (an absent or null cost is 0)."""
        usage = ev.get("usage")
        session = ev.get("session_cost_usd")
        return cls(
            cost_usd=float(ev.get("cost_usd", 0.0) or 0.0),
            cost_unknown=bool(ev.get("cost_unknown")),
            usage=dict(usage) if isinstance(usage, Mapping) else {},
            session_cost_usd=float(session) if session is not None else None,
            anomaly=ev.get("cost_anomaly") or None,
        )


def summed(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    """Two token usages added, kind by kind (in ``a``'s order, then ``b``'s new kinds)."""
    out = dict(a)
    for key, n in b.items():
        out[key] = out.get(key, 0) + n
    return out
