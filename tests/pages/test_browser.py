"""The pages in a real browser: headless Chromium (from `npm ci`, no network) renders a run's
page and the statistics' page without a console error, their DOMs hold what omg wrote and
nothing text from outside made, and each is screenshot whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gfm import HOSTILE
from kit import omg_in_process
from stats.synth import make_runs

from omg.pages import run_page

from .browser import Loaded, load, png_size
from .dom import elements
from .sample import MARKS, make_run, view


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("sample"))


def shot(found: Loaded, where: Path) -> Path:
    """The screenshot kept in the test's directory, checked to be a PNG of the whole page."""
    assert found.png and png_size(found.png) == (found.width, found.height)
    assert found.width >= 1000 and found.height > 800  # the page, not just the window
    where.write_bytes(found.png)
    return where


def test_a_runs_page_renders_its_graph_timeline_loops_gates_and_ledger(
    sample: Path, tmp_path: Path
) -> None:
    page = tmp_path / "run.html"
    runs = sample.parent
    done = omg_in_process(
        "report", "r1", "--html", str(page), "--runs-dir", str(runs), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {page} (run r1: passed)")
    found = load(page, tmp_path / "chromium")
    assert found.errors == []
    dom = elements(found.dom)
    sections = [attrs for tag, attrs in dom if tag == "section"]
    assert len(sections) == 5
    for key in ("graph", "timeline", "loops", "gates", "ledger"):
        assert f'<section id="{key}">' in found.dom
    assert found.dom.count('<g class="node"') == 4
    assert found.dom.count('<g class="exec"') == 5  # work and check twice each, side once
    assert found.dom.count('<svg class="timeline"') == 1  # leg 2 decided the gate, ran nothing
    assert found.dom.count('<table class="rounds">') == 1
    ledger = found.dom.split('<table class="ledger">', 1)[1].split("</table>", 1)[0]
    assert ledger.count("<tr>") == 1 + 6  # head, five executions and the gate's decision
    shot(found, tmp_path / "run-page.png")


def test_hostile_text_makes_no_element_in_the_browser(sample: Path, tmp_path: Path) -> None:
    every = "\n".join(HOSTILE)
    plain, hostile = tmp_path / "plain.html", tmp_path / "hostile.html"
    plain.write_text(run_page(view(sample, [f"plain {i}" for i in range(len(MARKS))])))
    hostile.write_text(run_page(view(sample, [f"{every} {i}" for i in range(len(MARKS))])))
    seen = load(plain, tmp_path / "a")
    attacked = load(hostile, tmp_path / "b")
    assert attacked.errors == [] and seen.errors == []  # a blocked script would say so
    assert elements(attacked.dom) == elements(seen.dom)
    assert "forged row" in attacked.dom and "<script>alert(1)" not in attacked.dom
    shot(attacked, tmp_path / "hostile-page.png")


def test_the_statistics_page_renders_its_tables_and_plots(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_runs(repo, 60)
    listed = omg_in_process("stats", "-f", "json", cwd=repo)
    [graph] = json.loads(listed.stdout)["summary"]["graphs"]
    a, b = (v["version"] for v in graph["versions"])
    page = tmp_path / "stats.html"
    done = omg_in_process("stats", "--compare", a, b, "--html", str(page), cwd=repo)
    assert done.returncode == 0, done.stderr
    assert f"wrote {page}" in done.stderr
    found = load(page, tmp_path / "chromium")
    assert found.errors == []
    assert '<section id="compare">' in found.dom
    assert found.dom.count('<table class="stats">') == 1 + 5  # the comparison, then the graph's
    assert found.dom.count('<svg class="histogram"') >= 4  # rounds, cost, gate waits, per version
    assert found.dom.count('<svg class="bars"') >= 6
    shot(found, tmp_path / "stats-page.png")
