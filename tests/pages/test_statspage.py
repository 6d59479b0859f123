"""The statistics' page and its Markdown: names from run records — graphs, nodes, causes,
fragment paths, a damaged branch's reason — are inert: with hostile text each holds exactly
the elements it holds with plain words."""

from __future__ import annotations

from datetime import UTC, datetime

from gfm import HOSTILE, read

from omg.cli.stats import render
from omg.pages import stats_page
from omg.stats.compare import compare
from omg.stats.facts import Damaged, GateWait, Loop, RunFacts, Version
from omg.stats.summary import Summary, summarise

from .dom import elements


def summary(word: str) -> Summary:
    def run(rid: str, sha: str, cost: float) -> RunFacts:
        return RunFacts(
            run_id=rid, version=Version(f"graph {word}", sha * 64, ((f"f/{word}.yaml", "1" * 64),)),
            started=datetime(2026, 12, 1, tzinfo=UTC), outcome="passed", cost_usd=cost,
            cost_unknown=False, executions=3, attempts=3, pull_request=4, rehearsal=False,
            loops=(Loop(f"review {word}", 1, "converged"),),
            gates=(GateWait(f"gate {word}", 30.0, "approve"),),
            failures=((f"node {word}", f"cause {word}"),), api_retries=1, limit_pauses=0,
        )  # fmt: skip

    runs = [run("1", "a", 1.0), run("2", "a", 2.0), run("3", "b", 0.5), run("4", "b", 0.7)]
    return summarise([*runs, Damaged("x", "c" * 40, f"why {word}")])


def pair(word: str) -> tuple[Summary, tuple[str, str]]:
    s = summary(word)
    a, b = (v.version for v in s.versions())
    return s, (a, b)


def test_hostile_names_make_no_element_on_the_statistics_page() -> None:
    s, (a, b) = pair("plain")
    plain = elements(stats_page(s, compare(s, a, b)))
    assert ("svg", ("aria-label", "class", "height", "role", "viewbox", "width", "xmlns")) in plain
    for hostile in HOSTILE:
        s, (a, b) = pair(hostile)
        assert elements(stats_page(s, compare(s, a, b))) == plain, hostile


def test_hostile_names_make_no_element_in_the_markdown() -> None:
    s, versus = pair("plain")
    plain = read(render(s, "markdown", None)).tags
    side = read(render(s, "markdown", versus)).tags
    assert plain.count("table") == 6 and side.count("table") == 1
    for hostile in HOSTILE:
        s, versus = pair(hostile)
        assert read(render(s, "markdown", None)).tags == plain, hostile
        assert read(render(s, "markdown", versus)).tags == side, hostile


def test_hostile_names_reach_the_terminal_without_control_characters() -> None:
    s, _ = pair("\x1b[2J\x1b]0;owned\x07 line\nbreak")
    shown = render(s, "text", None)
    assert "\x1b" not in shown and "\x07" not in shown and "\\x1b[2J" in shown
