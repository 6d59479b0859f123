"""One run's page, read back: the graph with each node's verdict, a bar per execution on its
leg's clock, the loop's rounds with their findings, the gate decided, the ledger — and text
from outside omg inert in all of it: a page with hostile text holds exactly the elements of the
same page with plain words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gfm import HOSTILE

from omg.pages import run_page
from omg.pages.page import POLICY

from .dom import elements, text
from .sample import MARKS, make_run, view

PLAIN = [f"plain words {i}" for i in range(len(MARKS))]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("sample"))


def test_the_page_shows_the_graph_the_timeline_the_loop_the_gate_and_the_ledger(
    sample: Path,
) -> None:
    v = view(sample, PLAIN)
    page = run_page(v)
    nodes = re.findall(r'<g class="node" data-node="([^"]+)" data-status="([^"]+)">', page)
    assert dict(nodes) == {"work": "passed", "check": "passed", "side": "passed", "ok": "passed"}
    assert page.count('<path class="arc"') == 1  # check's feedback arc back to work
    started = [e["node_id"] for e in v.events if e["event"] == "node_started"]
    bars = re.findall(r'<g class="exec" data-node="([^"]+)" data-verdict="([^"]+)">', page)
    assert [n for n, _ in bars] == started  # one bar per execution, in the order they started
    assert ("check", "LOOPING") in bars and page.count("<h3>Leg ") == 2
    assert page.count('<svg class="timeline"') == 1  # the second leg only decided the gate
    assert "No execution: this leg decided or noted." in page
    rounds = re.search(r'<table class="rounds">.*?</table>', page, re.S)
    assert rounds is not None and rounds.group(0).count("<tr>") == 3  # head, round 0, round 1
    assert "plain words 2" in rounds.group(0)  # round 0's findings: what check printed
    assert re.search(r"<td>ok</td><td>approve</td><td>plain words 3</td>", page)
    ledger = re.search(r'<table class="ledger">.*?</table>', page, re.S)
    assert ledger is not None and ledger.group(0).count("<tr>") == 1 + len(v.ledger_rows)
    assert f'content="{POLICY}"' in page and "<script" not in page


def lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def test_text_from_outside_omg_is_inert_on_the_page(sample: Path) -> None:
    plain = run_page(view(sample, PLAIN))
    for hostile in HOSTILE:
        said = [f"{hostile} {i}" for i in range(len(MARKS))]
        page = run_page(view(sample, said))
        assert elements(page) == elements(plain), hostile
        shown = lines(text(page))
        for words in said:
            assert lines(words) in shown  # whole, as text


def test_the_page_is_self_contained() -> None:
    from omg.pages.page import CSS

    assert not re.search(r"url\(|@import|https?:", CSS)  # no font, image or sheet fetched
