"""The sticky comment and step summary of a real run whose every outside string is hostile,
rendered by cmark-gfm: the same elements as the same run with plain words, each hostile text
shown verbatim, the marker intact; and the Mermaid diagram within what GitHub's Mermaid draws."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from gfm import HOSTILE, Page, read

from omg import ledgerrows as ledger
from omg.ci import report_md as report
from omg.github.markdown import marker_value, one_line
from omg.graph.build import graph_from_data
from omg.graph.load import graph_from_snapshot
from omg.graph.mermaid import MAX_EDGES, MAX_TEXT, edge_count, render_mermaid
from omg.graph.model import Graph
from omg.state import Event, State
from omg.state.ledger import ledger as book_of
from omg.state.store import RunDir

NAME = "x --> y **b** </table>\n# h"
QUESTION = "Ship <b>it</b>? `x` | [y](https://evil.example) @everyone"
NOTE = "refused '/omg approve ok </table> **b** x --> y' from stranger: ``` <!--"
#: Node outputs the ledger's detail column shows: what fits its 90 characters after omg's words.
OUTPUTS = [h for h in HOSTILE if "\x00" not in h]
LINKS = report.Links(
    "https://github.com/o/r/tree/omg/runs/pr-2-x", "https://github.com/o/r/actions/runs/9"
)


def plain(text: str) -> str:
    """A harmless text as long as ``text``: where a cut falls stays where it was."""
    return "w" * len(text)


def run_graph(
    where: Path, name: str, question: str, outputs: list[str]
) -> tuple[Graph, State, list[Event]]:
    """A real `omg run`: one failing shell node per output (it prints the output), and a gate.
    A graph file's name is refused unless in run-id form, so the file names the run plainly and
    the report meets ``name`` as a run's snapshot from before that rule would hand it over."""
    where.mkdir()
    nodes: list[dict[str, Any]] = []
    for i, text in enumerate(outputs):
        (where / f"out{i}.txt").write_bytes(text.encode())
        nodes.append({"id": f"n{i}", "run": f"cat out{i}.txt; exit 1"})
    nodes.append({"id": "ok", "type": "gate", "description": question})
    doc = {"name": "run", "on_fail": "continue", "concurrency": 8, "nodes": nodes}
    (where / "graph.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    done = subprocess.run(
        [sys.executable, "-m", "omg", "run", "graph.yaml", "--no-commit", "--run-id", "r1"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 4, done.stderr  # paused at the gate
    rundir = RunDir(where / ".omg" / "runs" / "r1")
    state = rundir.read_state()
    graph = graph_from_snapshot({**state["graph"], "name": name}, state["graph_source"])
    return graph, state, list(rundir.read_events())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Graph, State, list[Event]]]:
    root = tmp_path_factory.mktemp("runs")
    return {
        "hostile": run_graph(root / "hostile", NAME, QUESTION, OUTPUTS),
        "plain": run_graph(
            root / "plain", plain(NAME), plain(QUESTION), [plain(o) for o in OUTPUTS]
        ),
    }


def rendered(
    runs: dict[str, tuple[Graph, State, list[Event]]], which: str, where: str
) -> tuple[Page, Graph, State, list[Event]]:
    graph, state, events = runs[which]
    note = NOTE if which == "hostile" else plain(NOTE)
    sit = report.Situation("paused", "ok", "a" * 40, "b" * 40, "gate", note)
    if where == "comment":
        text = report.comment(graph, state, events, sit, LINKS, 2)
    else:
        text = report.markdown(graph, state, events, sit, LINKS, rows=1000)
    return read(text), graph, state, events


@pytest.mark.parametrize("where", ["comment", "summary"])
def test_hostile_strings_make_no_element_of_their_own(runs: Any, where: str) -> None:
    hostile, *_ = rendered(runs, "hostile", where)
    twin, *_ = rendered(runs, "plain", where)
    assert hostile.tags == twin.tags, hostile.html
    assert hostile.hrefs() == [LINKS.run_branch, LINKS.workflow_run]
    assert hostile.tags.count("tr") == len(OUTPUTS) + 2  # the head row, a row per node, the gate
    # every element is one omg writes: no img, script, strong from a detail, extra rows
    assert set(hostile.tags) <= {
        *("h3", "p", "code", "a", "strong", "pre", "blockquote", "table"),
        *("thead", "tbody", "tr", "th", "td"),
    }
    assert hostile.tags.count("strong") == 2  # **Next:** and **Spent:**


@pytest.mark.parametrize("where", ["comment", "summary"])
def test_every_hostile_string_shows_verbatim_as_text(runs: Any, where: str) -> None:
    page, graph, _, events = rendered(runs, "hostile", where)
    assert one_line(NAME) in page.codes and one_line(QUESTION) in page.codes
    assert one_line(NOTE) in page.codes
    rows = ledger.execution_rows(graph, book_of(events, ledger.limits(graph)))
    details = [r[-1] for r in rows if r[-1]]
    assert len(details) == len(OUTPUTS)
    for detail in details:  # the ledger's cell holds the detail exactly as the ledger cut it
        assert one_line(detail) in page.codes, detail
    prose = "".join(page.prose)
    for text in [NAME, QUESTION, NOTE, *OUTPUTS]:
        for line in text.splitlines():
            if len(line.strip()) >= 5:
                assert line not in prose, f"{line!r} is outside a code span"


def test_the_comment_starts_with_its_marker_whole_and_nothing_else_is_hidden(runs: Any) -> None:
    page, graph, *_ = rendered(runs, "hostile", "comment")
    want = report.marker(2, graph.name)
    assert want == f"<!-- omg:sticky pr=2 graph={marker_value(NAME)} -->"
    assert page.html.startswith(want + "\n<h3>")
    assert page.comments == [want[4:-3]]
    assert "-->" not in want[4:-3] and "\n" not in want


def test_the_diagram_is_the_mermaid_text_exactly(runs: Any) -> None:
    page, graph, *_ = rendered(runs, "hostile", "comment")
    [diagram] = [c for c in page.codes if c.startswith("flowchart TD")]
    status = {f"n{i}": "failed" for i in range(len(OUTPUTS))} | {"ok": "paused"}
    assert diagram == render_mermaid(graph, status)


HOSTILE_IDS = ["a|b", "c`d", "e</td>f", "g**h**", 'i"j<k>#l', "m\nn"]


def test_node_ids_from_a_damaged_snapshot_are_inert_too() -> None:
    nodes: list[dict[str, Any]] = [{"id": HOSTILE_IDS[0], "run": "true"}]
    nodes += [{"id": i, "run": "true", "depends_on": [HOSTILE_IDS[0]]} for i in HOSTILE_IDS[1:]]
    nodes.append({"id": "gate|`x`", "type": "gate", "depends_on": HOSTILE_IDS[1:]})
    graph = graph_from_data({"name": "g", "nodes": nodes})
    state: dict[str, Any] = {
        "run_id": "r1", "nodes": {}, "gates": {}, "paused_at": "gate|`x`", "legs": [{}],
        "cost_usd": 0.0,
    }  # fmt: skip
    sit = report.Situation("paused", "gate|`x`", "", "", "gate")
    page = read(report.comment(graph, state, [], sit, report.Links(), 2))  # type: ignore[arg-type]
    assert page.tags.count("tr") == len(nodes) + 1 and page.tags.count("td") == 8 * len(nodes)
    for nid in [*HOSTILE_IDS, "gate|`x`"]:
        assert one_line(nid) in page.codes, nid
    [commands] = [c for c in page.codes if c.startswith("/omg approve")]
    assert commands == "/omg approve gate|`x`\n/omg reject gate|`x` <reason>\n"
    [diagram] = [c for c in page.codes if c.startswith("flowchart TD")]
    assert diagram == render_mermaid(graph, {"gate|`x`": "paused"})
    assert "`" not in diagram and "e</td>f" not in diagram and "#lt;/td#gt;" in diagram


def wide(sources: int, sinks: int, *, extra: int = 0, arcs: int = 0) -> Graph:
    """``sources`` × ``sinks`` depends_on edges, ``extra`` more in a chain, ``arcs`` loops."""
    nodes: list[dict[str, Any]] = [{"id": f"s{i}", "run": "true"} for i in range(sources)]
    nodes += [
        {"id": f"t{j}", "run": "true", "depends_on": [f"s{i}" for i in range(sources)]}
        for j in range(sinks)
    ]
    nodes += [
        {"id": f"c{k}", "run": "true", "depends_on": [f"c{k - 1}" if k else "t0"]}
        for k in range(extra)
    ]
    for a in range(arcs):
        fb = {"rerun": f"s{a}", "max": 1, "on_exhausted": "gate"}
        nodes.append({"id": f"r{a}", "prompt": "p", "depends_on": ["t0"], "feedback": fb})
    return graph_from_data({"name": "g", "nodes": nodes})


@pytest.mark.parametrize(
    ("graph", "edges"),
    [
        (wide(2, 3), 6),
        (wide(2, 3, extra=4), 10),
        (wide(2, 1, arcs=2), 2 + 2 * 3),  # each loop: its depends_on, its arc, its gate's
        (wide(25, 20), 500),
    ],
)
def test_edge_count_counts_every_edge_the_diagram_draws(graph: Graph, edges: int) -> None:
    text = render_mermaid(graph)
    assert edge_count(graph) == edges == text.count(" --> ") + text.count(" .-> ")


def empty_state() -> State:
    data: dict[str, Any] = {"nodes": {}, "gates": {}, "paused_at": None}
    return data  # type: ignore[return-value]


def test_a_diagram_of_500_edges_is_drawn_and_one_more_edge_gives_a_line_instead() -> None:
    at = report.diagram(wide(25, 20), empty_state())
    assert at.startswith("```mermaid\n") and at.count(" --> ") == MAX_EDGES
    over = report.diagram(wide(25, 20, extra=1), empty_state())
    assert not over.startswith("```") and "501 edges" in over and "500 edges" in over
    assert read(over).tags == ["p", "em", "code"]  # one plain line, `omg graph FILE` in it
    looped = report.diagram(wide(24, 20, arcs=10), empty_state())  # 480 + 10 × 3 edges
    assert edge_count(wide(24, 20, arcs=10)) == 510 and "510 edges" in looped


def test_a_diagram_past_50000_characters_gives_a_line_instead() -> None:
    def long_ids(n: int, width: int) -> Graph:
        nodes = [{"id": f"{i:03d}" + "x" * width, "run": "true"} for i in range(n)]
        return graph_from_data({"name": "g", "nodes": nodes})

    fits = long_ids(40, 1000)
    assert len(render_mermaid(fits, {})) <= MAX_TEXT
    assert report.diagram(fits, empty_state()).startswith("```mermaid\n")
    big = long_ids(60, 1000)
    size = len(render_mermaid(big, {}))
    assert size > MAX_TEXT and edge_count(big) == 0
    line = report.diagram(big, empty_state())
    assert f"{size:,} characters" in line and "50,000" in line and "```" not in line


def test_past_200_nodes_there_is_no_diagram_whatever_the_edges() -> None:
    nodes = [{"id": f"n{i}", "run": "true"} for i in range(201)]
    line = report.diagram(graph_from_data({"name": "g", "nodes": nodes}), empty_state())
    assert "201 nodes and 0 edges, too many for a diagram" in line


def test_a_headline_keeps_a_name_with_double_spaces_whole() -> None:
    graph = graph_from_data({"name": "a  b", "nodes": [{"id": "n", "run": "true"}]})
    state: dict[str, Any] = {"run_id": "r", "nodes": {}, "gates": {}, "paused_at": None,
                             "legs": [], "cost_usd": 0.0}  # fmt: skip
    text = report.markdown(graph, state, [], report.Situation("passed"), report.Links(), rows=5)  # type: ignore[arg-type]
    assert read(text.splitlines()[0]).codes == ["a  b"]


HEAD = "d" * 40
REPO = report.Links("", "", "https://github.com/o/r")


def pr_state(**more: Any) -> State:
    lanes = {
        "lane": {"branch": "omg/work/pr-2-x/lane", "commit": "1" * 40},
        "b <i>x</i>": {"branch": "omg/work/pr-2-x/b", "commit": "2" * 40},
        "mine": {"branch": "feature", "commit": "3" * 40},  # a graph's own branch: not offered
    }
    data: dict[str, Any] = {"run_id": "pr-2-x", "nodes": {}, "gates": {}, "paused_at": None,
                            "legs": [{"leg": 1, "outcome": "paused", "reason": "leg_budget"}],
                            "cost_usd": 0.0, "status": "paused", "worktrees": lanes,
                            "pull_request": {"number": 2, "head_sha": HEAD, **more}}  # fmt: skip
    return data  # type: ignore[return-value]


def test_a_pr_runs_lanes_are_offered_as_branches_compared_with_the_head() -> None:
    graph = graph_from_data({"name": "g", "nodes": [{"id": "n", "run": "true"}]})
    sit = report.Situation("paused", head_sha=HEAD)
    page = read(report.markdown(graph, pr_state(), [], sit, REPO, rows=5))
    hrefs = [a["href"] for name, a in page.elements if name == "a"]
    compare = "https://github.com/o/r/compare/" + HEAD + "..."
    assert hrefs == [compare + "omg/work/pr-2-x/b", compare + "omg/work/pr-2-x/lane"]
    assert "omg/work/pr-2-x/lane" in page.codes and "feature" not in page.codes
    no_pr = {k: v for k, v in pr_state().items() if k != "pull_request"}
    assert report.lanes(no_pr, REPO) == ""  # type: ignore[arg-type]
    assert report.lanes(pr_state(), report.Links()) == ""


@pytest.mark.parametrize("fork", [True, False], ids=["a fork's run", "a branch's run"])
def test_a_forks_run_out_of_time_asks_a_writer_to_continue_it(fork: bool) -> None:
    graph = graph_from_data({"name": "g", "nodes": [{"id": "n", "run": "true"}]})
    state = pr_state(fork=True) if fork else pr_state()
    sit = report.Situation("paused", head_sha=HEAD)
    text = report.markdown(graph, state, [], sit, REPO, rows=5)
    assert (report.FORK_NEXT in text) is fork
