"""The leg's deadline: one clock for the loop's launches and every execution's retries."""

from __future__ import annotations

import pytest

from omg.leg.deadline import Deadline


class Ticks:
    """A clock that moves only when told to."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("minutes", "elapsed", "left"),
    [
        (None, 0.0, None),
        (None, 1e6, None),
        (1.0, 0.0, 60.0),
        (1.0, 15.0, 45.0),
        (0.5, 30.0, 0.0),
        (0.5, 40.0, -10.0),
        (0.0, 0.0, 0.0),
    ],
)
def test_seconds_left_count_from_when_the_deadline_was_set(
    minutes: float | None, elapsed: float, left: float | None
) -> None:
    clock = Ticks()
    deadline = Deadline.after(minutes, clock)
    clock.now += elapsed
    assert deadline.left() == left


def test_everyone_holding_the_deadline_sees_the_same_time_left() -> None:
    clock = Ticks()
    deadline = Deadline.after(2, clock)
    loop_view, execution_view = deadline, deadline  # a frozen value handed down, never patched
    clock.now += 90
    assert loop_view.left() == execution_view.left() == 30.0


def test_no_budget_is_the_default() -> None:
    assert Deadline().left() is None
