"""A leg limited to a matrix entry's nodes runs exactly those (their retries included) and
leaves every other ready node, gate and re-armed loop body pending for the fold to plan."""

from __future__ import annotations

from pathlib import Path

from omg.graph.load import load_graph
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, start_run
from omg.schedule import statuses

GRAPH = """\
name: only
concurrency: 4
nodes:
  - {id: a, run: 'echo a'}
  - {id: b, run: 'echo b'}
  - {id: c, depends_on: [a], run: 'echo c'}
  - id: flaky
    run: 'test -e tried || { touch tried; exit 1; }'
    retry: {max: 1, on: [nonzero_exit]}
  - {id: ok, type: gate, depends_on: [b]}
"""


def run_only(tmp_path: Path, *ids: str) -> dict[str, str]:
    path = tmp_path / "g.yaml"
    path.write_text(GRAPH)
    graph = load_graph(path)
    env = Environment(runs_dir=tmp_path / "runs", root=tmp_path)
    opts = LegOptions(4, only=frozenset(ids))
    end = start_run(graph, path, {}, env, opts, run_id="r")
    return dict(statuses(graph, end.state["nodes"]))


def test_only_the_entrys_nodes_run_and_their_children_inside_it_follow(tmp_path: Path) -> None:
    status = run_only(tmp_path, "a", "c")
    assert status == {"a": "passed", "c": "passed", "b": "pending", "flaky": "pending",
                      "ok": "pending"}  # fmt: skip


def test_an_entry_keeps_its_nodes_retries(tmp_path: Path) -> None:
    assert run_only(tmp_path, "flaky")["flaky"] == "passed"


def test_a_gate_outside_the_entry_is_not_paused_at(tmp_path: Path) -> None:
    status = run_only(tmp_path, "b")
    assert status["b"] == "passed" and status["ok"] == "pending"
