"""`--retry-failed`: clears FAILs, re-arms an exhausted loop with fresh rounds, keeps the rest."""

from __future__ import annotations

from pathlib import Path

from .conftest import Cli
from .helpers import events, launches, log_lines, of_kind, run_path, state, write_graph

# review fails (a judgment: nonzero_exit) until the file `ok` exists; its arc re-runs impl → lint.
LOOP = """\
name: loop
nodes:
  - id: other
    run: echo other >> log.txt
  - id: approve
    type: gate
  - id: impl
    depends_on: [approve]
    run: echo impl >> log.txt
  - id: lint
    depends_on: [impl]
    run: echo lint >> log.txt
  - id: review
    depends_on: [lint]
    run: 'echo review >> log.txt; echo "FINDINGS: no tests for the parser"; test -f ok'
    feedback: {rerun: impl, max: 2, stop_on_no_progress: false}
  - id: ship
    depends_on: [review, other]
    run: echo ship >> log.txt
"""

BODY = ("impl", "lint", "review")


def exhausted_run(cli: Cli, tmp_path: Path) -> Path:
    write_graph(tmp_path, LOOP)
    assert cli("run", "g.yaml", "--run-id", "r", "-c", "1").returncode == 4
    res = cli("resume", "r", "--approve", "approve", "--by", "ann")
    assert res.returncode == 1, res.stderr
    rd = run_path(tmp_path, "r")
    st = state(rd)
    assert st["nodes"]["review"]["verdict"] == "FAIL"
    assert st["nodes"]["review"]["round"] == 2
    assert st["nodes"]["review"]["detail"].startswith("feedback exhausted after 2 round(s)")
    assert launches(events(rd), leg=2) == [(n, r) for r in (0, 1, 2) for n in BODY]
    return rd


def test_retry_failed_rearms_the_whole_body_and_keeps_passes_and_decisions(
    cli: Cli, tmp_path: Path
) -> None:
    rd = exhausted_run(cli, tmp_path)
    (tmp_path / "ok").touch()
    res = cli("resume", "r", "--retry-failed")
    assert res.returncode == 0, res.stderr
    evs = events(rd)
    # The whole body re-runs from round 0 (not the declarer alone), then what was waiting on it.
    assert launches(evs, leg=3) == [("impl", 0), ("lint", 0), ("review", 0), ("ship", 0)]
    assert of_kind(evs, "run_started", leg=3)[0]["retry_failed"] is True
    # PASSes outside the loop and the gate decision were kept: nothing asked, nothing re-ran.
    assert not of_kind(evs, "gate_paused", "gate_approved", leg=3)
    assert log_lines(tmp_path).count("other") == 1
    st = state(rd)
    assert st["gates"]["approve"]["by"] == "ann"
    assert st["nodes"]["approve"]["provenance"] == "approved"
    for nid in BODY:
        assert st["nodes"][nid]["verdict"] == "PASS" and st["nodes"][nid]["round"] == 0
    # Spend and attempts of the cleared records carry over (they were real).
    assert st["nodes"]["review"]["attempts"] == 4
    assert st["status"] == "passed"


def test_retry_failed_buys_a_fresh_set_of_rounds(cli: Cli, tmp_path: Path) -> None:
    rd = exhausted_run(cli, tmp_path)
    res = cli("resume", "r", "--retry-failed")
    assert res.returncode == 1, res.stderr
    evs = events(rd)
    assert launches(evs, leg=3) == [(n, r) for r in (0, 1, 2) for n in BODY]
    fired = [e["round"] for e in of_kind(evs, "node_retried", leg=3) if e["reason"] == "feedback"]
    assert fired == [1, 2]
    st = state(rd)
    # --retry-failed is a human decision: the hop count restarts, so leg 3 counts only its rounds
    assert st["nodes"]["review"]["verdict"] == "FAIL" and st["hops"] == 2


def test_retry_failed_keeps_a_loop_marker_and_continues_its_round(cli: Cli, tmp_path: Path) -> None:
    # lint breaks (a final failure: lint has no arc) on its second execution — round 1 of the loop.
    write_graph(
        tmp_path,
        """\
name: mid
nodes:
  - id: impl
    run: echo impl >> log.txt
  - id: lint
    depends_on: [impl]
    run: 'n=$(grep -c lint log.txt); echo lint >> log.txt; [ "$n" != 1 ] || [ -f fixed ]'
  - id: review
    depends_on: [lint]
    run: 'echo review >> log.txt; test -f ok'
    feedback: {rerun: impl, max: 2, stop_on_no_progress: false}
""",
    )
    rd = run_path(tmp_path, "r")
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 1
    st = state(rd)
    assert st["nodes"]["review"]["verdict"] == "" and st["nodes"]["review"]["round"] == 1
    assert (st["nodes"]["lint"]["verdict"], st["nodes"]["lint"]["round"]) == ("FAIL", 1)
    assert (st["nodes"]["impl"]["verdict"], st["nodes"]["impl"]["round"]) == ("PASS", 1)
    plain = cli("resume", "r")
    assert plain.returncode == 3 and "--retry-failed" in plain.stderr
    (tmp_path / "fixed").touch()
    assert cli("resume", "r", "--retry-failed").returncode == 1
    evs = events(rd)
    # lint re-runs in round 1 (impl's round-1 PASS is kept), then max − 1 = 1 round remains.
    assert launches(evs, leg=2) == [
        ("lint", 1),
        ("review", 1),
        ("impl", 2),
        ("lint", 2),
        ("review", 2),
    ]
    fired = [e["round"] for e in of_kind(evs, "node_retried") if e["reason"] == "feedback"]
    assert fired == [1, 2]
    assert state(rd)["nodes"]["review"]["detail"].startswith("feedback exhausted after 2 round(s)")


def test_retry_failed_with_nothing_failed_appends_no_leg(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, "name: ok\nnodes:\n  - id: a\n    run: 'true'\n")
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 0
    rd = run_path(tmp_path, "r")
    before = (rd / "events.jsonl").read_bytes()
    res = cli("resume", "r", "--retry-failed")
    assert res.returncode == 0 and "nothing to do" in res.stdout
    plain = cli("resume", "r")
    assert plain.returncode == 0 and "nothing to do" in plain.stdout
    assert (rd / "events.jsonl").read_bytes() == before


def test_retry_failed_reruns_a_plain_failure_and_what_it_pruned(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        """\
name: plain
on_fail: continue
nodes:
  - id: flaky
    run: 'echo flaky >> log.txt; test -f ok'
  - id: after
    depends_on: [flaky]
    run: echo after >> log.txt
  - id: side
    run: echo side >> log.txt
""",
    )
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 1
    (tmp_path / "ok").touch()
    assert cli("resume", "r", "--retry-failed").returncode == 0
    assert launches(events(run_path(tmp_path, "r")), leg=2) == [("flaky", 0), ("after", 0)]
    assert sorted(log_lines(tmp_path)) == ["after", "flaky", "flaky", "side"]


def test_the_ledger_counts_retries_not_attempts_carried_across_legs(
    cli: Cli, tmp_path: Path
) -> None:
    """Attempts a --retry-failed leg adds are not retries; only retry: attempts are."""
    write_graph(tmp_path, "name: once\nnodes:\n  - id: flaky\n    run: test -f ok\n")
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 1
    assert cli("resume", "r", "--retry-failed").returncode == 1
    (tmp_path / "ok").write_text("")
    res = cli("resume", "r", "--retry-failed")
    assert res.returncode == 0, res.stderr
    assert "retries: 0" in res.stdout
    assert state(run_path(tmp_path, "r"))["nodes"]["flaky"]["attempts"] == 3
