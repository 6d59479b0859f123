"""The statistics as tables of words: each cell omg's own words or text from a run's record
(graph names, node ids, causes), marked so every format shows the latter as inert text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from omg.stats.compare import Comparison, Row
from omg.stats.facts import ENDINGS, OUTCOMES
from omg.stats.figures import Share, Spread
from omg.stats.summary import GraphStats, Summary, VersionStats


@dataclass(frozen=True)
class Cell:
    text: str
    untrusted: bool = False  # from a run's record: shown as code, never as markup


Line = tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    """A heading (omg's words and names from records), the column names and the rows."""

    title: Line
    head: tuple[str, ...]
    rows: tuple[Line, ...]


def words(*texts: str) -> Line:
    return tuple(Cell(t) for t in texts)


def usd(x: float | None) -> str:
    return "-" if x is None else f"${x:,.4f}" if abs(x) < 100 else f"${x:,.2f}"


def seconds(x: float | None) -> str:
    if x is None:
        return "-"
    x = max(0.0, x)
    if x < 60:
        return f"{x:.0f}s"
    if x < 3600:
        return f"{int(x // 60)}m {int(x % 60):02d}s"
    return f"{int(x // 3600)}h {int(x % 3600 // 60):02d}m"


def amount(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


SHOW = {"usd": usd, "seconds": seconds, "count": amount}


def middle(s: Spread, unit: str) -> str:
    """``median [q1–q3]`` of a spread, ``-`` for none."""
    show = SHOW[unit]
    if s.median is None:
        return "-"
    if s.n == 1:
        return show(s.median)
    return f"{show(s.median)} [{show(s.q1)}–{show(s.q3)}]"


def mean(s: Spread, unit: str) -> str:
    """``mean (95%: lo–hi)`` of a spread."""
    show = SHOW[unit]
    if s.mean is None:
        return "-"
    if s.interval is None:
        return show(s.mean)
    return f"{show(s.mean)} (95%: {show(s.interval[0])}–{show(s.interval[1])})"


def share(s: Share) -> str:
    """``k/n = p% (95%: lo–hi%)``."""
    if s.p is None or s.interval is None:
        return f"{s.k}/{s.n}"
    lo, hi = s.interval
    return f"{s.k}/{s.n} = {s.p:.0%} (95%: {lo:.0%}–{hi:.0%})"


def day(when: datetime | None) -> str:
    return "-" if when is None else when.strftime("%Y-%m-%d")


def counts(found: Mapping[int, int]) -> str:
    """``0×2 1×4``: how many loops converged after each number of rounds."""
    return " ".join(f"{k}×{v}" for k, v in found.items()) or "-"


def summary_tables(summary: Summary) -> list[Table]:
    """Every table of the statistics, graph by graph."""
    out: list[Table] = []
    for g in summary.graphs:
        out += graph_tables(g)
    if summary.damaged:
        out.append(
            Table(
                words(f"{len(summary.damaged)} run branch(es) not counted: damaged"),
                ("run", "commit", "why"),
                tuple(
                    (Cell(d.run_id, True), Cell(d.commit[:12]), Cell(d.why, True))
                    for d in summary.damaged
                ),
            )
        )
    return out


def made_of(v: VersionStats) -> str:
    """What a version is the hashes of: its graph file's, and each fragment's it spliced."""
    if not v.graph_sha256:
        return "-"
    frags = "".join(f" + {path}@{sha[:7]}" for path, sha in v.fragments)
    return f"graph {v.graph_sha256.removeprefix('snapshot:')[:7]}{frags}"


def _label(v: VersionStats) -> Cell:
    return Cell("all versions" if v.graph_sha256 == "" else v.version)


def graph_tables(g: GraphStats) -> list[Table]:
    rows = [g.overall, *g.versions] if len(g.versions) > 1 else list(g.versions)
    name = Cell(g.name, True)
    runs = Table(
        (Cell("graph "), name, Cell(f": {g.overall.runs} run(s), {len(g.versions)} version(s)")),
        ("version", "first", "last", "runs", *OUTCOMES, "rehearsed", "made of"),
        tuple(
            (_label(v), Cell(day(v.first)), Cell(day(v.last)), Cell(str(v.runs)),
             *(Cell(str(v.outcomes[o])) for o in OUTCOMES), Cell(str(v.rehearsed)),
             Cell(made_of(v), untrusted=bool(v.fragments)))
            for v in rows
        ),
    )  # fmt: skip
    loops = Table(
        (Cell("feedback loops of "), name),
        ("version", "ended", *ENDINGS, "converged share", "rounds until convergence",
         "loops by rounds"),
        tuple(
            (_label(v), Cell(str(v.converged.n)), *(Cell(str(v.endings[e])) for e in ENDINGS),
             Cell(share(v.converged)), Cell(middle(v.rounds, "count")),
             Cell(counts(v.round_counts)))
            for v in rows
        ),
    )  # fmt: skip
    cost = Table(
        (Cell("executions and cost of "), name),
        ("version", "executions / run", "cost / run", "mean cost / run", "total",
         "cost / passed run", "cost / pull request"),
        tuple(
            (_label(v), Cell(middle(v.executions, "count")), Cell(middle(v.cost, "usd")),
             Cell(mean(v.cost, "usd")), Cell(usd(v.cost.total) + (
                 f" (≥; {v.cost_unknown} run(s) of unknown cost)" if v.cost_unknown else "")),
             Cell(usd(v.cost_per_pass)),
             Cell(f"{middle(v.cost_per_pr, 'usd')} ({v.cost_per_pr.n} PR(s))"))
            for v in rows
        ),
    )  # fmt: skip
    people = Table(
        (Cell("gates, retries and limits of "), name),
        ("version", "gates decided", "wait at a gate", "waiting now", "API retries",
         "limit pauses"),
        tuple(
            (_label(v), Cell(str(v.gate_wait.n)), Cell(middle(v.gate_wait, "seconds")),
             Cell(str(v.gates_open)),
             Cell(f"{v.api_retries.total:.0f} in {v.api_retries.n} run(s)"),
             Cell(f"{v.limit_pauses} in {v.limit_runs} run(s)"))
            for v in rows
        ),
    )  # fmt: skip
    causes = Table(
        (Cell("failed attempts of "), name, Cell(" by node and cause")),
        ("version", "node", "cause", "attempts"),
        tuple(
            (_label(v), Cell(node, True), Cell(cause, True), Cell(str(n)))
            for v in rows
            for node, found in v.failures.items()
            for cause, n in found.items()
        ),
    )
    return [runs, loops, cost, people, causes]


def comparison_table(c: Comparison) -> Table:
    """Two versions side by side, and whether each difference is within noise."""

    def one(side: Share | Spread, row: Row) -> str:
        if isinstance(side, Share):
            return share(side)
        if not side.n:
            return "n=0"
        return f"n={side.n}: median {middle(side, row.unit)}; mean {mean(side, row.unit)}"

    noise = {True: "yes (the intervals overlap)", False: "no", None: "too few to tell"}
    a, b = c.a, c.b
    return Table(
        (Cell(f"{a.version} ("), Cell(a.graph, True), Cell(f", {a.runs} run(s)) against "
         f"{b.version} ("), Cell(b.graph, True), Cell(f", {b.runs} run(s))")),
        ("figure", a.version, b.version, "within noise?"),
        (
            *((Cell(r.figure), Cell(one(r.a, r)), Cell(one(r.b, r)), Cell(noise[r.within_noise]))
              for r in c.rows),
            words("cost per passed run", usd(a.cost_per_pass), usd(b.cost_per_pass), "-"),
            words("loops by rounds", counts(a.round_counts), counts(b.round_counts), "-"),
        ),
    )  # fmt: skip
