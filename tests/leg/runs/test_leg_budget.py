"""Leg budgets: `--max-nodes` and `--max-minutes` stop a leg cleanly, as a pause of its own kind."""

from __future__ import annotations

from pathlib import Path

from .conftest import Cli
from .helpers import events, launches, log_lines, of_kind, run_path, state, write_graph

CHAIN = """\
name: chain
nodes:
  - id: a
    run: echo a >> log.txt
  - id: b
    depends_on: [a]
    run: echo b >> log.txt
  - id: c
    depends_on: [b]
    run: echo c >> log.txt
"""


def test_max_nodes_pauses_each_leg_for_its_budget(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, CHAIN)
    rd = run_path(tmp_path, "r")
    res = cli("run", "g.yaml", "--run-id", "r", "--max-nodes", "1")
    assert res.returncode == 4, res.stderr
    assert "leg budget" in res.stdout and "omg resume r" in res.stdout
    fin = events(rd)[-1]
    assert (fin["event"], fin["outcome"], fin["reason"]) == ("run_finished", "paused", "leg_budget")
    assert "paused_at" not in fin
    st = state(rd)
    assert st["status"] == "paused" and st["paused_at"] is None
    assert st["legs"][-1]["reason"] == "leg_budget"
    assert "paused for leg budget" in cli("status").stdout
    status = cli("status", "r")
    assert "paused for leg budget" in status.stdout and "omg resume r" in status.stdout

    assert cli("resume", "r", "--max-nodes", "1").returncode == 4
    assert cli("resume", "r", "--max-nodes", "5").returncode == 0
    evs = events(rd)
    assert [launches(evs, leg=n) for n in (1, 2, 3)] == [[("a", 0)], [("b", 0)], [("c", 0)]]
    assert log_lines(tmp_path) == ["a", "b", "c"]
    assert [leg["reason"] for leg in state(rd)["legs"]] == ["leg_budget", "leg_budget", None]


def test_max_minutes_starts_no_node_whose_timeout_would_not_fit(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        """\
name: timed
nodes:
  - id: quick
    timeout: 2s
    run: echo quick >> log.txt
  - id: long
    depends_on: [quick]
    timeout: 10m
    run: echo long >> log.txt
  - id: tail
    depends_on: [long]
    timeout: 1s
    run: echo tail >> log.txt
""",
    )
    rd = run_path(tmp_path, "r")
    # 0.1 minute = 6 s: quick (2 s) fits, long (10 min) does not — it is not even started.
    res = cli("run", "g.yaml", "--run-id", "r", "--max-minutes", "0.1")
    assert res.returncode == 4, res.stderr
    assert launches(events(rd)) == [("quick", 0)]
    assert events(rd)[-1]["reason"] == "leg_budget"
    # Another short leg cannot start long either: it pauses again, having run nothing.
    assert cli("resume", "r", "--max-minutes", "0.1").returncode == 4
    assert launches(events(rd), leg=2) == []
    assert events(rd)[-1]["reason"] == "leg_budget"
    # A leg with room runs the rest.
    assert cli("resume", "r", "--max-minutes", "11").returncode == 0
    assert launches(events(rd), leg=3) == [("long", 0), ("tail", 0)]
    assert log_lines(tmp_path) == ["quick", "long", "tail"]


def test_a_budget_pause_is_not_a_gate_pause(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        """\
name: both
nodes:
  - id: a
    run: 'true'
  - id: gate
    type: gate
    depends_on: [a]
  - id: b
    depends_on: [gate]
    run: 'true'
  - id: c
    depends_on: [b]
    run: 'true'
""",
    )
    rd = run_path(tmp_path, "r")
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    gate_fin = events(rd)[-1]
    # Decide the gate in a leg that may start one node: b runs, c waits for the next leg.
    res = cli("resume", "r", "--approve", "gate", "--max-nodes", "1")
    assert res.returncode == 4, res.stderr
    budget_fin = events(rd)[-1]
    assert (gate_fin["reason"], gate_fin.get("paused_at")) == ("gate", "gate")
    assert (budget_fin["reason"], budget_fin.get("paused_at")) == ("leg_budget", None)
    assert launches(events(rd), leg=2) == [("b", 0)]
    assert "paused for leg budget" in cli("status", "r").stdout
    assert cli("resume", "r").returncode == 0
    assert [e["outcome"] for e in of_kind(events(rd), "run_finished")] == [
        "paused",
        "paused",
        "passed",
    ]


def test_max_nodes_zero_runs_nothing_and_pauses(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, CHAIN)
    assert cli("run", "g.yaml", "--run-id", "r", "--max-nodes", "0").returncode == 4
    rd = run_path(tmp_path, "r")
    assert launches(events(rd)) == [] and state(rd)["legs"][0]["reason"] == "leg_budget"
    assert cli("resume", "r").returncode == 0
    assert log_lines(tmp_path) == ["a", "b", "c"]


RETRYING = """\
name: flaky
nodes:
  - id: flaky
    run: 'echo try >> log.txt; test -f ok'
    timeout: 40s
    retry: {max: 2, on: [nonzero_exit], backoff: {initial: 25s}}
"""


def test_a_retry_the_leg_budget_cannot_hold_is_deferred_to_the_next_leg(
    cli: Cli, tmp_path: Path
) -> None:
    """40 s fits a 1-minute leg, 25 s of backoff + another 40 s does not: pause, don't overrun."""
    write_graph(tmp_path, RETRYING)
    rd = run_path(tmp_path, "r")
    res = cli("run", "g.yaml", "--run-id", "r", "--max-minutes", "1")
    assert res.returncode == 4, res.stderr
    assert log_lines(tmp_path) == ["try"], "the retry was not started, nor waited for"
    (deferred,) = of_kind(events(rd), "node_retried")
    assert deferred["reason"] == "leg_budget" and deferred["cause"] == "nonzero_exit"
    assert "retry deferred to the next leg" in deferred["detail"]
    fin = events(rd)[-1]
    assert (fin["outcome"], fin["reason"]) == ("paused", "leg_budget")
    rec = state(rd)["nodes"]["flaky"]
    assert rec["verdict"] == "" and rec["attempts"] == 1  # counted, not final

    (tmp_path / "ok").write_text("")
    res = cli("resume", "r")
    assert res.returncode == 0, res.stderr
    assert state(rd)["nodes"]["flaky"]["verdict"] == "PASS"
    assert log_lines(tmp_path) == ["try", "try"]
