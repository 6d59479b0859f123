"""Statistics over many runs: each run's facts, grouped by graph and version, with the counts
behind every figure (pure: the records come in as bytes, the figures go out as values).

Read from the run branches:

- ``intake``: a branch's record taken in — state.json caught up with the events past its ``seq``
  (the only folding done), checked against its schema, or ``Damaged``, never raised.
- ``facts`` (pure): one run's facts — its graph ``Version``, the hashes of its file and every
  fragment; how it stands; each loop's rounds and ending, converged / ``no_progress`` /
  exhausted / broken; each gate's wait for a person; failed attempts by node and cause; API
  retries, limit pauses.
- ``figures`` (pure): a ``Spread`` — n, quartiles, mean and its 95% interval — and a ``Share``
  with its Wilson interval.
- ``summary`` (pure): per graph and version.
- ``compare`` (pure): two versions side by side, each figure within noise or not.
- ``tables`` (pure): the figures as tables of words, text from records marked untrusted.
"""

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
