"""The statistics' page: the tables of ``omg stats`` and, per graph version, its distributions
as plots — outcomes, loop endings, rounds until convergence, cost per run, time at gates and
failure causes; two versions side by side when compared."""

from __future__ import annotations

from omg.pages.page import document, esc, section
from omg.pages.svg import bars, figure, histogram
from omg.stats.compare import Comparison
from omg.stats.facts import ENDINGS, OUTCOMES
from omg.stats.figures import Spread
from omg.stats.figures import histogram as binned
from omg.stats.summary import Summary, VersionStats
from omg.stats.tables import Table, comparison_table, graph_tables, seconds, usd


def table_html(t: Table) -> str:
    """A stats table; a cell from a record is code, every cell escaped."""
    title = "".join(f"<code>{esc(c.text)}</code>" if c.untrusted else esc(c.text) for c in t.title)
    head = "".join(f"<th>{esc(h)}</th>" for h in t.head)
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td><code>{esc(c.text)}</code></td>" if c.untrusted else f"<td>{esc(c.text)}</td>"
            for c in r
        )
        + "</tr>"
        for r in t.rows
    )
    body = (
        f'<table class="stats"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        if t.rows
        else "<p>none</p>"
    )
    return f"<h3>{title}</h3>{body}"


def _spread_plot(s: Spread, show: str, name: str) -> str:
    if not s.values:
        return ""
    fmt = usd if show == "usd" else seconds
    bins = binned(s.values, 8)
    return histogram(
        [(fmt(lo), n) for lo, _, n in bins],
        name=name,
        tips=[f"{fmt(lo)} to {fmt(hi)}" for lo, hi, _ in bins],
    )


def plots(v: VersionStats) -> str:
    """A version's distributions."""
    outcomes = bars([(o, float(v.outcomes[o])) for o in OUTCOMES], _count, name="runs by outcome")
    endings = bars([(e, float(v.endings[e])) for e in ENDINGS], _count, name="loop endings")
    rounds = histogram([(str(k), n) for k, n in v.round_counts.items()], name="rounds")
    causes = bars(
        [(f"{node}: {cause}", float(n)) for node, found in v.failures.items()
         for cause, n in found.items()][:20],
        _count, name="failed attempts by node and cause",
    )  # fmt: skip
    return (
        '<div class="plots">'
        + "".join(
            [
                figure(outcomes, "runs by outcome"),
                figure(endings, "feedback loops by how they ended"),
                figure(rounds, "loops that converged, by feedback rounds taken"),
                figure(_spread_plot(v.cost, "usd", "cost per run"), "cost per run (USD)"),
                figure(_spread_plot(v.gate_wait, "seconds", "gate wait"), "time waiting at a gate"),
                figure(causes, "failed attempts by node and cause"),
            ]
        )
        + "</div>"
    )


def _count(x: float) -> str:
    return f"{x:.0f}"


def _version_heading(v: VersionStats) -> str:
    frags = ", ".join(f"{path} @ {sha[:7]}" for path, sha in v.fragments)
    made = f"graph file {v.graph_sha256[:12]}" + (f"; fragments {frags}" if frags else "")
    return (
        f"<h3>Version {esc(v.version)} of <code>{esc(v.graph)}</code></h3>"
        f'<p class="meta">{esc(made)} · {v.runs} run(s)</p>'
    )


def _compared(c: Comparison) -> str:
    a, b = c.a, c.b
    pairs = [
        ("runs passed", a.passed.p or 0.0, b.passed.p or 0.0),
        ("loops converged", a.converged.p or 0.0, b.converged.p or 0.0),
    ]
    share = bars([(k, x) for k, x, _ in pairs], lambda x: f"{x:.0%}", name="shares",
                 second=[y for _, _, y in pairs])  # fmt: skip
    cost = bars([("median cost / run", a.cost.median or 0.0)], usd, name="cost",
                second=[b.cost.median or 0.0])  # fmt: skip
    rounds = bars([("median rounds", a.rounds.median or 0.0)], lambda x: f"{x:.1f}",
                  name="rounds", second=[b.rounds.median or 0.0])  # fmt: skip
    key = (
        f'<p class="legend"><span><i class="bar-a"></i>upper bar: {esc(a.version)}</span>'
        f'<span><i class="bar-b"></i>lower bar: {esc(b.version)}</span></p>'
    )
    return section(
        "compare", f"{a.version} against {b.version}",
        table_html(comparison_table(c)) + key + '<div class="plots">'
        + figure(share, "shares, each version") + figure(cost, "median cost per run")
        + figure(rounds, "median rounds until convergence") + "</div>",
    )  # fmt: skip


def stats_page(summary: Summary, comparison: Comparison | None = None) -> str:
    """The whole page of the statistics."""
    sections = [_compared(comparison)] if comparison is not None else []
    for g in summary.graphs:
        body = "".join(table_html(t) for t in graph_tables(g))
        for v in g.versions:
            body += _version_heading(v) + plots(v)
        sections.append(section(f"graph-{len(sections)}", f"graph {g.name}", body))
    if summary.damaged:
        rows = "".join(
            f"<tr><td><code>{esc(d.run_id)}</code></td><td>{esc(d.commit[:12])}</td>"
            f"<td>{esc(d.why)}</td></tr>"
            for d in summary.damaged
        )
        found = f'<table class="damaged"><tbody>{rows}</tbody></table>'
        sections.append(section("damaged", "Damaged run branches (not counted)", found))
    since = f" since {summary.since.isoformat(timespec='minutes')}" if summary.since else ""
    where = f"{summary.remote}'s" if summary.remote is not None else "the local"
    meta = esc(f"{summary.runs} run(s){since} on {where} run branches")
    return document("omg stats", "omg stats", meta, sections)
