"""When a paused run may be tried again: the limit's conservative bound, a day cap's next UTC
day, and a recorded wait read back — table tests of the pure rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from omg.errors import Unreadable
from omg.leg.caps import next_day
from omg.leg.wait import due, ended, record, sort_out
from omg.runners.limits import Limit

NOON = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("kind", "poll_s", "bound"),
    [
        ("session", None, "2026-12-04T12:30:00Z"),  # a usage window: half an hour
        ("rate", None, "2026-12-04T12:05:00Z"),  # a rate limit: five minutes
        ("session", 60.0, "2026-12-04T12:01:00Z"),  # the action's limit-wait replaces both
        ("rate", 0.0, "2026-12-04T12:00:00Z"),
    ],
)
def test_a_limit_waits_a_conservative_bound_whatever_its_reset_says(kind, poll_s, bound) -> None:
    limit = Limit(kind, "You've hit your session limit · resets 3pm", "3pm")
    wait = record("impl", limit, NOON, poll_s)
    assert wait["not_before"] == bound
    assert wait["resets"] == "3pm" and wait["said"].startswith("You've hit")  # kept as words


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (NOON + timedelta(minutes=29, seconds=59), False),
        (NOON + timedelta(minutes=30), True),
        (NOON + timedelta(days=1), True),
    ],
)
def test_a_wait_is_due_from_its_bound_on(now: datetime, expected: bool) -> None:
    wait = record("impl", Limit("session", "limit"), NOON)
    assert due(wait, now) is expected


@pytest.mark.parametrize(
    ("now", "day_after"),
    [
        (datetime(2026, 12, 4, 0, 0, 0, tzinfo=UTC), datetime(2026, 12, 5, tzinfo=UTC)),
        (datetime(2026, 12, 4, 23, 59, 59, tzinfo=UTC), datetime(2026, 12, 5, tzinfo=UTC)),
        (datetime(2026, 12, 31, 18, 0, 0, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
        # 01:00 on the 5th at UTC+2 is still the 4th in UTC: the cap is a UTC day's
        (
            datetime(2026, 12, 5, 1, 0, 0, tzinfo=timezone(timedelta(hours=2))),
            datetime(2026, 12, 5, tzinfo=UTC),
        ),
    ],
)
def test_a_day_cap_holds_a_run_back_until_the_next_utc_day(now, day_after) -> None:
    assert next_day(now) == day_after


def _wait_ref(bound: str) -> bytes:
    return json.dumps({"run_id": "r", "not_before": bound, "why": "the day's cap"}).encode()


@pytest.mark.parametrize(
    ("data", "now", "expected"),
    [
        # a day cap's wait, recorded on the 4th: held all day, over at the next UTC midnight
        (_wait_ref("2026-12-05T00:00:00Z"), datetime(2026, 12, 4, 23, 59, tzinfo=UTC), False),
        (_wait_ref("2026-12-05T00:00:00Z"), datetime(2026, 12, 5, 0, 0, tzinfo=UTC), True),
    ],
)
def test_a_recorded_wait_ends_at_its_bound(data: bytes, now: datetime, expected: bool) -> None:
    assert ended(data, now) is expected


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "empty"),
        (b"{not json", "not JSON omg wrote"),
        (b"\xff\xfe", "not JSON omg wrote"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply for any record"),
        (b'{"not_before": NaN}', "NaN is not a number"),
        (b'{"not_before": 1e999}', "past a float's range"),
        (b'{"run_id": "r"}', "no not_before time"),
        (b"[]", "no not_before time"),
        (_wait_ref("tomorrow"), "no not_before time"),
    ],
)
def test_a_damaged_wait_is_refused_saying_why_never_taken_as_over(data: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        ended(data, NOON)


def test_the_runs_whose_wait_is_over_go_on_and_a_damaged_one_is_named_and_skipped() -> None:
    found = {
        "later": _wait_ref("2026-12-05T00:00:00Z"),
        "due": _wait_ref("2026-12-04T00:00:00Z"),
        "nested": b"[" * 100_000 + b"]" * 100_000,
        "tree": Unreadable("refs/remotes/origin/omg-waits/tree", "c" * 40, "holds no wait.json"),
    }
    over, damaged = sort_out(found, NOON)
    assert over == ["due"]
    assert damaged == {
        "nested": "its wait.json is not JSON omg wrote (it is nested too deeply for any record)",
        "tree": "it holds no wait.json",
    }
