"""The statistics of many runs: per graph and per graph version, what the runs came to — by
outcome, loop endings and rounds, executions, cost, people's time at gates, failure causes,
API retries and limit pauses — each figure with the counts behind it."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from omg.stats.facts import (
    ENDINGS,
    OUTCOMES,
    Damaged,
    LoopEnding,
    RunFacts,
    RunOutcome,
    Version,
)
from omg.stats.figures import Share, Spread, spread

#: The name a graph's figures over all its versions go by.
ALL = "all"


@dataclass(frozen=True)
class VersionStats:
    """The figures of one graph version's runs (or of all the graph's, version ``all``)."""

    graph: str
    version: str
    graph_sha256: str  # "" for ``all``
    fragments: tuple[tuple[str, str], ...]
    first: datetime | None
    last: datetime | None
    runs: int
    rehearsed: int
    outcomes: Mapping[RunOutcome, int]
    passed: Share  # passed of the runs that ended (passed or failed)
    endings: Mapping[LoopEnding, int]
    converged: Share  # converged of the loops that ended
    rounds: Spread  # feedback rounds of the loops that converged
    round_counts: Mapping[int, int]  # rounds → loops that converged after that many
    executions: Spread  # per run
    cost: Spread  # per run, in USD
    cost_unknown: int  # runs with an execution of unknown cost (their figure is a floor)
    cost_per_pass: float | None  # every run's spend over the runs that passed
    cost_per_pr: Spread  # per pull request, its runs (superseded ones too) together
    gate_wait: Spread  # seconds from a pause at a gate to a person's decision
    gates_open: int  # runs waiting at a gate now
    failures: Mapping[str, Mapping[str, int]]  # node → cause → failed attempts
    api_retries: Spread  # per run
    limit_pauses: int
    limit_runs: int  # runs that paused for a provider's limit at least once


@dataclass(frozen=True)
class GraphStats:
    """One graph's figures: over all its versions, then per version, oldest first."""

    name: str
    overall: VersionStats
    versions: tuple[VersionStats, ...]


@dataclass(frozen=True)
class Summary:
    """The statistics of every run read: from which remote's run branches (None: the local
    ones), which were counted, which were damaged."""

    remote: str | None
    since: datetime | None
    graph: str | None
    runs: int
    graphs: tuple[GraphStats, ...]
    damaged: tuple[Damaged, ...]

    def versions(self) -> list[VersionStats]:
        return [v for g in self.graphs for v in g.versions]


def summarise(
    taken: Iterable[RunFacts | Damaged],
    *,
    remote: str | None = None,
    since: datetime | None = None,
    graph: str | None = None,
) -> Summary:
    """Group the runs by graph and version and figure each group; ``since`` keeps the runs whose
    first leg started then or later, ``graph`` the runs of that graph."""
    runs: list[RunFacts] = []
    damaged: list[Damaged] = []
    for item in taken:
        if isinstance(item, Damaged):
            damaged.append(item)
        elif (graph is None or item.version.graph == graph) and (
            since is None or (item.started is not None and item.started >= since)
        ):
            runs.append(item)
    by_graph: dict[str, list[RunFacts]] = defaultdict(list)
    for run in runs:
        by_graph[run.version.graph].append(run)
    graphs = []
    for name in sorted(by_graph):
        mine = by_graph[name]
        by_version: dict[Version, list[RunFacts]] = defaultdict(list)
        for run in mine:
            by_version[run.version].append(run)
        ordered = sorted(by_version.items(), key=lambda kv: (_first(kv[1]), kv[0].key))
        graphs.append(
            GraphStats(
                name,
                figure(name, ALL, None, mine),
                tuple(figure(name, v.key, v, rs) for v, rs in ordered),
            )
        )
    return Summary(remote, since, graph, len(runs), tuple(graphs), tuple(damaged))


def _first(runs: Sequence[RunFacts]) -> float:
    """When the earliest of ``runs`` started (a version's age), as a POSIX time."""
    return min((r.started.timestamp() for r in runs if r.started is not None), default=math.inf)


def figure(graph: str, key: str, version: Version | None, runs: Sequence[RunFacts]) -> VersionStats:
    """The figures of ``runs`` (one graph's, of one version or all)."""
    outcomes = Counter(r.outcome for r in runs)
    loops = [loop for r in runs for loop in r.loops]
    endings = Counter(loop.ending for loop in loops)
    converged = [loop.rounds for loop in loops if loop.ending == "converged"]
    passed = outcomes["passed"]
    total = sum(r.cost_usd for r in runs)
    per_pr: dict[int, float] = defaultdict(float)
    for r in runs:
        if r.pull_request is not None:
            per_pr[r.pull_request] += r.cost_usd
    waits = [g.seconds for r in runs for g in r.gates if g.seconds is not None]
    failures: dict[str, Counter[str]] = defaultdict(Counter)
    for r in runs:
        for node, cause in r.failures:
            failures[node][cause] += 1
    starts = [r.started for r in runs if r.started is not None]
    return VersionStats(
        graph=graph,
        version=key,
        graph_sha256=version.graph_sha256 if version is not None else "",
        fragments=version.fragments if version is not None else (),
        first=min(starts) if starts else None,
        last=max(starts) if starts else None,
        runs=len(runs),
        rehearsed=sum(1 for r in runs if r.rehearsal),
        outcomes={o: outcomes[o] for o in OUTCOMES},
        passed=Share(passed, passed + outcomes["failed"]),
        endings={e: endings[e] for e in ENDINGS},
        converged=Share(len(converged), len(loops)),
        rounds=spread(converged),
        round_counts=dict(sorted(Counter(converged).items())),
        executions=spread(r.executions for r in runs),
        cost=spread(r.cost_usd for r in runs),
        cost_unknown=sum(1 for r in runs if r.cost_unknown),
        cost_per_pass=total / passed if passed else None,
        cost_per_pr=spread(per_pr.values()),
        gate_wait=spread(waits),
        gates_open=sum(1 for r in runs for g in r.gates if g.seconds is None),
        failures={n: dict(c.most_common()) for n, c in sorted(failures.items())},
        api_retries=spread(r.api_retries for r in runs),
        limit_pauses=sum(r.limit_pauses for r in runs),
        limit_runs=sum(1 for r in runs if r.limit_pauses),
    )
