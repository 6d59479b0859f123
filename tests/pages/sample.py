"""A sample run for the page tests, made for real (shell nodes, a feedback loop that fires once,
a gate a person approves), with markers where text from outside omg lands — the graph's name, a
node's description, a failure's output, the findings, a decision's author and reason — so a
test can put hostile text or plain words in their place and compare the pages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kit import resume_graph, run_graph

from omg import ledgerrows
from omg.cli.runpage import findings
from omg.graph.build import graph_from_data
from omg.leg.decisions import Decision
from omg.pages import RunView
from omg.state.ledger import ledger as book_of
from omg.state.store import RunDir, load_run

MARKS = [f"mark{i}x" for i in range(5)]
GRAPH = f"""\
name: {MARKS[0]}
nodes:
  - id: work
    description: {MARKS[1]}
    run: printf 'did it'
  - id: check
    depends_on: [work]
    run: |
      n=$(cat rounds 2>/dev/null || echo 0)
      echo $((n + 1)) > rounds
      if [ "$n" -lt 1 ]; then echo '{MARKS[2]}'; exit 1; fi
      echo fine
    feedback: {{rerun: work, max: 2}}
  - id: side
    run: sleep 0.2
  - id: ok
    type: gate
    depends_on: [check, side]
    description: merge it?
"""


def make_run(root: Path) -> Path:
    """The run, made under ``root``: its directory."""
    from kit import clean_env

    env = clean_env(TMPDIR=str(root))
    first = run_graph(root, GRAPH, parent_env=env, concurrency=2)
    assert first.error is None, first.error
    decided = Decision("ok", True, MARKS[3], MARKS[4])
    second = resume_graph(root, parent_env=env, decision=decided)
    assert second.error is None, second.error
    return first.dir


def _put(value: Any, words: dict[str, str]) -> Any:
    """``value`` with every marker replaced by its words."""
    if isinstance(value, str):
        for mark, said in words.items():
            value = value.replace(mark, said)
        return value
    if isinstance(value, dict):
        return {_put(k, words): _put(v, words) for k, v in value.items()}
    if isinstance(value, list):
        return [_put(v, words) for v in value]
    return value


def view(run_dir: Path, texts: list[str]) -> RunView:
    """The run's page view with the markers' places holding ``texts`` (one per marker)."""
    rundir = RunDir(run_dir)
    state, _ = load_run(rundir)
    events = list(rundir.read_events())
    graph = graph_from_data(state["graph"])
    found = findings(graph, rundir, events)
    words = dict(zip(MARKS, texts, strict=False))
    state, events = _put(json.loads(json.dumps(state)), words), _put(events, words)
    found = {k: _put(v, words) for k, v in found.items()}
    graph = graph_from_data(state["graph"])
    rows = ledgerrows.execution_rows(graph, book_of(events, ledgerrows.limits(graph)))
    return RunView(graph, state, events, "passed", ledgerrows.EXECUTION_COLUMNS, rows, found)
