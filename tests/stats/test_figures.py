"""Figures with their counts: a spread's quartiles and interval, a share's Wilson interval,
whether two intervals overlap, and equal-width bins — as tables of cases."""

from __future__ import annotations

import pytest

from omg.stats.figures import Share, histogram, overlap, quantile, spread


@pytest.mark.parametrize(
    ("values", "q", "want"),
    [
        ([1.0], 0.5, 1.0),
        ([1.0, 3.0], 0.5, 2.0),
        ([1.0, 2.0, 3.0, 4.0], 0.25, 1.75),
        ([1.0, 2.0, 3.0, 4.0], 0.75, 3.25),
        ([0.0, 10.0], 1.0, 10.0),
    ],
)
def test_a_quantile_interpolates_between_neighbours(
    values: list[float], q: float, want: float
) -> None:
    assert quantile(values, q) == pytest.approx(want)


def test_a_spread_counts_and_places_its_sample_in_any_order() -> None:
    s = spread([4.0, 1.0, 3.0, 2.0])
    assert (s.n, s.total, s.low, s.median, s.high) == (4, 10.0, 1.0, 2.5, 4.0)
    assert (s.q1, s.q3) == (pytest.approx(1.75), pytest.approx(3.25))
    assert s.mean == 2.5 and s.values == (1.0, 2.0, 3.0, 4.0)
    assert s.interval is not None
    lo, hi = s.interval  # mean ± 1.96 · sd / √n: sd of 1..4 is 1.291
    assert (lo, hi) == (pytest.approx(2.5 - 1.265, abs=1e-3), pytest.approx(2.5 + 1.265, abs=1e-3))


@pytest.mark.parametrize(
    ("values", "has_interval"), [([], False), ([5.0], False), ([5.0, 5.0], True)]
)
def test_a_spread_gives_an_interval_only_from_two_values(
    values: list[float], has_interval: bool
) -> None:
    s = spread(values)
    assert (s.interval is not None) == has_interval and s.n == len(values)
    if not values:
        assert s.median is None and s.mean is None


@pytest.mark.parametrize(
    ("k", "n", "p", "lo", "hi"),
    [
        (0, 0, None, None, None),
        (5, 10, 0.5, 0.2366, 0.7634),  # Wilson's interval for one half of ten
        (10, 10, 1.0, 0.7225, 1.0),  # never past one, though every one passed
        (0, 10, 0.0, 0.0, 0.2775),
        (1, 1, 1.0, 0.2065, 1.0),
    ],
)
def test_a_share_has_its_wilson_interval(
    k: int, n: int, p: float | None, lo: float | None, hi: float | None
) -> None:
    s = Share(k, n)
    assert s.p == p
    if lo is None:
        assert s.interval is None
    else:
        assert s.interval == (pytest.approx(lo, abs=1e-4), pytest.approx(hi, abs=1e-4))


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ((0.0, 1.0), (0.5, 2.0), True),
        ((0.0, 1.0), (1.0, 2.0), True),  # touching is within noise
        ((0.0, 1.0), (1.5, 2.0), False),
        ((1.5, 2.0), (0.0, 1.0), False),
        (None, (0.0, 1.0), None),  # too few values to tell
    ],
)
def test_intervals_overlap_or_not(
    a: tuple[float, float] | None, b: tuple[float, float], want: bool | None
) -> None:
    assert overlap(a, b) is want


def test_values_fall_in_equal_bins_the_greatest_in_the_last() -> None:
    assert histogram([]) == []
    assert histogram([2.0, 2.0]) == [(2.0, 2.0, 2)]
    bins = histogram([0.0, 1.0, 2.0, 10.0], bins=5)
    assert [n for _, _, n in bins] == [2, 1, 0, 0, 1]  # a bin holds its lower edge
    assert bins[0][:2] == (0.0, 2.0) and bins[-1][1] == 10.0
