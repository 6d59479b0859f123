"""Durations, pure: the `30s`, `2m`, `1h30m` strings a graph gives, as seconds, or refused."""

from __future__ import annotations

import pytest

from omg.graph.durations import parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90.0), ("2m", 120.0), ("1h30m", 5400.0), ("250ms", 0.25), (" 5s ", 5.0), (3, 3.0),
     (1.5, 1.5)],
)  # fmt: skip
def test_a_duration_is_read_as_seconds(text: str | int | float, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "5x", "m5", "1h 30m", True, False])
def test_a_malformed_duration_is_refused_with_the_forms_it_takes(text: str | bool) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


def test_a_boolean_is_refused_even_after_the_number_it_equals_was_read() -> None:
    assert parse_duration(1) == 1.0 and parse_duration(0) == 0.0
    for flag in (True, False):
        with pytest.raises(ValueError, match="invalid duration"):
            parse_duration(flag)
