"""Pure: when a run paused for a provider's limit is tried again.

The reset is recorded as the provider worded it and never parsed into a clock: a leg tries
again no earlier than a conservative bound after the pause (``not_before``), and a limit still
in force pauses it again — polling, which the resume workflow's schedule drives.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

from omg import strictjson
from omg.errors import Unreadable
from omg.kinds import LimitKind
from omg.records import LegRecord, WaitRecord
from omg.runners.limits import Limit

#: Seconds from a pause to the earliest retry, by kind: a subscription's usage window lasts
#: hours (a retry every half hour costs one short call); a rate limit, minutes.
POLL_S: Mapping[LimitKind, float] = {"session": 1800.0, "rate": 300.0}


def record(node_id: str, limit: Limit, now: datetime, poll_s: float | None = None) -> WaitRecord:
    """The wait a leg records when ``limit`` stopped ``node_id`` at ``now``."""
    wait = POLL_S[limit.kind] if poll_s is None else poll_s
    return {
        "node_id": node_id,
        "kind": limit.kind,
        "said": limit.said,
        "resets": limit.resets,
        "not_before": stamp(now + timedelta(seconds=wait)),
    }


def stamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def waiting(legs: list[LegRecord]) -> WaitRecord | None:
    """The wait the run's last leg ended on, if it paused for a limit."""
    if not legs or legs[-1].get("reason") != "limit":
        return None
    return legs[-1].get("wait")


def due(wait: WaitRecord, now: datetime) -> bool:
    """Whether a leg may try again at ``now``."""
    try:
        at = datetime.strptime(wait["not_before"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return True  # an unreadable bound holds nothing back: the next try finds out
    return now >= at


def ended(data: bytes, now: datetime) -> bool:
    """Whether a recorded wait (``wait.json`` on ``refs/omg/waits/<run>``) is over at ``now``;
    a ValueError saying why when it is not a wait omg wrote (damage lets no run go early)."""
    if not data:
        raise ValueError("its wait.json is empty")
    try:
        raw = strictjson.loads(data)
    except ValueError as exc:
        raise ValueError(f"its wait.json is not JSON omg wrote ({exc})") from None
    bound = raw.get("not_before") if isinstance(raw, dict) else None
    try:
        at = datetime.strptime(str(bound), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise ValueError("its wait.json holds no not_before time") from None
    return now >= at


def sort_out(
    found: Mapping[str, bytes | Unreadable], now: datetime
) -> tuple[list[str], dict[str, str]]:
    """The runs (by id) whose recorded wait is over at ``now``, and those whose wait omg cannot
    read, each with why: those are named and skipped, the others go on."""
    over: list[str] = []
    damaged: dict[str, str] = {}
    for rid, data in sorted(found.items()):
        try:
            if isinstance(data, Unreadable):
                raise ValueError(f"it {data.problem}")
            if ended(data, now):
                over.append(rid)
        except ValueError as exc:
            damaged[rid] = str(exc)
    return over, damaged


def describe(wait: WaitRecord) -> str:
    """One line for a person: which limit, its reset in the provider's words, the next try."""
    what = "a usage limit" if wait["kind"] == "session" else "an API rate limit"
    resets = f", resets {wait['resets']} (the provider's words)" if wait["resets"] else ""
    return (
        f"paused for {what} at {wait['node_id']}{resets}; tried again from "
        f"{wait['not_before']}: {wait['said']}"
    )
