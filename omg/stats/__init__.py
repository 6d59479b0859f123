"""Statistics over many runs: each run's facts, grouped by graph and version, with the counts
behind every figure (pure: the records come in as bytes, the figures go out as values)."""

from omg.stats.compare import Comparison, compare
from omg.stats.facts import Damaged, RunFacts, facts
from omg.stats.intake import take
from omg.stats.summary import GraphStats, Summary, VersionStats, summarise

__all__ = [
    "Comparison",
    "Damaged",
    "GraphStats",
    "RunFacts",
    "Summary",
    "VersionStats",
    "compare",
    "facts",
    "summarise",
    "take",
]
