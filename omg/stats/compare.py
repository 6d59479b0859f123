"""Two graph versions side by side: each figure of both, with its counts and interval, and
whether the difference is within noise (their 95% intervals overlap)."""

from __future__ import annotations

from dataclasses import dataclass

from omg.errors import UsageError
from omg.stats.figures import Share, Spread, overlap
from omg.stats.summary import Summary, VersionStats

#: The shortest version prefix ``--compare`` takes.
MIN_PREFIX = 4


@dataclass(frozen=True)
class Row:
    """One figure of both versions: a share or a spread each, and whether they differ beyond
    their noise (None: too few values to tell)."""

    figure: str
    unit: str  # "share" | "usd" | "seconds" | "count"
    a: Share | Spread
    b: Share | Spread
    within_noise: bool | None


@dataclass(frozen=True)
class Comparison:
    a: VersionStats
    b: VersionStats
    rows: tuple[Row, ...]


def pick(summary: Summary, prefix: str) -> VersionStats:
    """The version whose key starts with ``prefix``; a usage error naming the versions there are
    when none or several do."""
    known = summary.versions()
    listed = ", ".join(f"{v.version} ({v.graph})" for v in known) or "none"
    if len(prefix) < MIN_PREFIX:
        raise UsageError(
            f"--compare {prefix!r}: give at least {MIN_PREFIX} characters of a version; "
            f"the versions: {listed}"
        )
    found = [v for v in known if v.version.startswith(prefix.lower())]
    if len(found) != 1:
        what = "no version" if not found else "more than one version"
        raise UsageError(f"--compare {prefix!r} names {what}; the versions: {listed}")
    return found[0]


def compare(summary: Summary, first: str, second: str) -> Comparison:
    """Versions ``first`` and ``second`` (key prefixes) side by side."""
    a, b = pick(summary, first), pick(summary, second)
    rows = [
        _share("runs passed (of those that ended)", a.passed, b.passed),
        _share("loops converged (of those that ended)", a.converged, b.converged),
        _spread("feedback rounds until convergence", "count", a.rounds, b.rounds),
        _spread("executions per run", "count", a.executions, b.executions),
        _spread("cost per run", "usd", a.cost, b.cost),
        _spread("cost per pull request", "usd", a.cost_per_pr, b.cost_per_pr),
        _spread("time waiting at a gate", "seconds", a.gate_wait, b.gate_wait),
        _spread("API retries per run", "count", a.api_retries, b.api_retries),
    ]
    return Comparison(a, b, tuple(rows))


def _share(name: str, a: Share, b: Share) -> Row:
    return Row(name, "share", a, b, overlap(a.interval, b.interval))


def _spread(name: str, unit: str, a: Spread, b: Spread) -> Row:
    return Row(name, unit, a, b, overlap(a.interval, b.interval))
