"""Pure: when a leg's live progress is shown on GitHub — which events change what is shown,
and whether one may be published now, at most once every ``interval`` seconds."""

from __future__ import annotations

from collections.abc import Mapping

#: GitHub is told of a leg's progress at most this often (seconds); the leg's end always.
INTERVAL = 20.0


def worth_showing(event: str, kind: str) -> bool:
    """Whether an event changes the live report: an agent node starting (the long waits), or
    any node settling (its verdict)."""
    if event == "node_started":
        return kind == "agent"
    return event in ("node_passed", "node_failed")


def due(now: float, last: float, interval: float = INTERVAL) -> bool:
    """Whether an update may go out at ``now``, the previous having gone at ``last`` (the
    leg's start counts as one): never twice within ``interval`` seconds."""
    return now - last >= interval


def running_line(started: Mapping[str, float], now: float) -> str:
    """The running nodes with their elapsed time, oldest first: ``build 42s, review 3s``."""
    ordered = sorted(started.items(), key=lambda kv: (kv[1], kv[0]))
    return ", ".join(f"{nid} {max(0.0, now - t):.0f}s" for nid, t in ordered)
