"""Figures with the counts behind them: a spread of values (n, median, quartiles, the mean and
its 95% interval) and a share (k of n, with its 95% Wilson interval), so a reader sees when two
figures differ by less than their noise."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

#: The normal quantile of a two-sided 95% interval.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Spread:
    """A sample of values: how many, where its middle half lies, its mean and the mean's 95%
    interval (normal approximation; None below two values)."""

    n: int
    total: float
    low: float | None
    q1: float | None
    median: float | None
    q3: float | None
    high: float | None
    mean: float | None
    interval: tuple[float, float] | None
    values: tuple[float, ...] = ()  # the sample, sorted (for plots)


@dataclass(frozen=True)
class Share:
    """``k`` of ``n``: the proportion and its 95% Wilson interval (None when n is 0)."""

    k: int
    n: int

    @property
    def p(self) -> float | None:
        return self.k / self.n if self.n else None

    @property
    def interval(self) -> tuple[float, float] | None:
        if not self.n:
            return None
        z2, n = Z95 * Z95, self.n
        p = self.k / n
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
        return (max(0.0, centre - half), min(1.0, centre + half))


def spread(values: Iterable[float]) -> Spread:
    """The spread of ``values`` (any order)."""
    xs = sorted(values)
    n = len(xs)
    if not n:
        return Spread(0, 0.0, None, None, None, None, None, None, None)
    total = math.fsum(xs)
    mean = total / n
    interval = None
    if n > 1:
        half = Z95 * statistics.stdev(xs) / math.sqrt(n)
        interval = (mean - half, mean + half)
    return Spread(
        n, total, xs[0], quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75), xs[-1],
        mean, interval, tuple(xs),
    )  # fmt: skip


def quantile(xs: list[float], q: float) -> float:
    """The ``q`` quantile of sorted ``xs``, interpolated between neighbours."""
    at = q * (len(xs) - 1)
    lo = math.floor(at)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (at - lo)


def overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool | None:
    """Whether two intervals overlap (the difference is within noise); None when either is
    unknown — too few values to tell."""
    if a is None or b is None:
        return None
    return a[0] <= b[1] and b[0] <= a[1]


def histogram(values: Iterable[float], bins: int = 10) -> list[tuple[float, float, int]]:
    """``values`` counted in ``bins`` equal bins from the least to the greatest: (from, to, n)
    each; one bin when all values are equal, none when there are none."""
    xs = sorted(values)
    if not xs:
        return []
    lo, hi = xs[0], xs[-1]
    if hi == lo:
        return [(lo, hi, len(xs))]
    width = (hi - lo) / bins
    counts = [0] * bins
    for x in xs:
        counts[min(int((x - lo) / width), bins - 1)] += 1
    return [(lo + i * width, lo + (i + 1) * width, c) for i, c in enumerate(counts)]
