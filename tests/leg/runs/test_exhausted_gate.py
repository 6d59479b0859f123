"""`on_exhausted: gate`: a spent loop asks a human at `<declarer>.exhausted`."""

from __future__ import annotations

from pathlib import Path

from .conftest import Cli
from .helpers import events, launches, log_lines, of_kind, run_path, state, write_graph

GRAPH = """\
name: exhaust
nodes:
  - id: impl
    run: echo impl >> log.txt
  - id: review
    depends_on: [impl]
    run: 'echo review >> log.txt; echo "FINDINGS: the parser drops comments"; test -f ok'
    feedback: {rerun: impl, max: 1, on_exhausted: gate}
  - id: ship
    depends_on: [review]
    run: echo ship >> log.txt
"""
GATE = "review.exhausted"


def paused(cli: Cli, tmp_path: Path) -> Path:
    write_graph(tmp_path, GRAPH)
    res = cli("run", "g.yaml", "--run-id", "r")
    assert res.returncode == 4, res.stderr
    assert f"--approve {GATE}" in res.stdout
    assert "accept 'review' as it is? feedback exhausted after 1 round(s)" in res.stdout
    return run_path(tmp_path, "r")


def test_exhausted_loop_pauses_at_its_gate_with_the_last_findings(cli: Cli, tmp_path: Path) -> None:
    rd = paused(cli, tmp_path)
    evs = events(rd)
    pause = of_kind(evs, "gate_paused")[0]
    assert pause["node_id"] == GATE and pause["declarer"] == "review"
    assert "FINDINGS: the parser drops comments" in pause["description"]
    assert "feedback exhausted after 1 round(s) of impl → review" in pause["description"]
    assert evs[-1]["outcome"] == "paused" and evs[-1]["paused_at"] == GATE
    st = state(rd)
    assert st["paused_at"] == GATE
    rec = st["nodes"]["review"]
    assert rec["verdict"] == "" and rec["awaiting"] == GATE and rec["round"] == 1
    assert rec["detail"].startswith("feedback exhausted after 1 round(s)")
    assert "ship" not in st["nodes"]
    status = cli("status", "r")
    assert f"paused at gate {GATE}" in status.stdout and "AWAITING" in status.stdout
    bare = cli("resume", "r")
    assert bare.returncode == 3 and f"--approve {GATE}" in bare.stderr


def test_approving_accepts_the_work(cli: Cli, tmp_path: Path) -> None:
    rd = paused(cli, tmp_path)
    res = cli("resume", "r", "--approve", GATE, "--by", "lead", "--reason", "good enough")
    assert res.returncode == 0, res.stderr
    st = state(rd)
    rec = st["nodes"]["review"]
    assert (rec["verdict"], rec["provenance"], rec["round"]) == ("PASS", "approved", 1)
    assert "awaiting" not in rec
    assert st["gates"][GATE]["decision"] == "approve" and st["gates"][GATE]["by"] == "lead"
    assert launches(events(rd), leg=2) == [("ship", 0)]
    assert log_lines(tmp_path) == ["impl", "review", "impl", "review", "ship"]


def test_rejecting_fails_it(cli: Cli, tmp_path: Path) -> None:
    rd = paused(cli, tmp_path)
    res = cli("resume", "r", "--reject", GATE, "--reason", "comments matter")
    assert res.returncode == 1, res.stderr
    st = state(rd)
    assert st["nodes"]["review"]["verdict"] == "FAIL" and "ship" not in st["nodes"]
    assert st["gates"][GATE]["decision"] == "reject" and st["status"] == "failed"


def test_retry_failed_at_the_gate_buys_fresh_rounds(cli: Cli, tmp_path: Path) -> None:
    rd = paused(cli, tmp_path)
    (tmp_path / "ok").touch()
    res = cli("resume", "r", "--retry-failed")
    assert res.returncode == 0, res.stderr
    assert launches(events(rd), leg=2) == [("impl", 0), ("review", 0), ("ship", 0)]
    st = state(rd)
    assert st["paused_at"] is None and GATE not in st["gates"]
    assert st["nodes"]["review"]["verdict"] == "PASS"


def test_a_rejected_loop_retried_and_exhausted_again_asks_again(cli: Cli, tmp_path: Path) -> None:
    rd = paused(cli, tmp_path)
    res = cli("resume", "r", "--reject", GATE, "--reason", "try harder", "--by", "a")
    assert res.returncode == 1, res.stderr
    res = cli("resume", "r", "--retry-failed")
    assert res.returncode == 4, res.stderr
    assert launches(events(rd), leg=3) == [("impl", 0), ("review", 0), ("impl", 1), ("review", 1)]
    # Fresh rounds made a fresh exhaustion: the rejection of the old one is not on it.
    assert state(rd)["paused_at"] == GATE and GATE not in state(rd)["gates"]
    res = cli("resume", "r", "--approve", GATE, "--by", "b")
    assert res.returncode == 0, res.stderr
    st = state(rd)
    assert st["gates"][GATE]["decision"] == "approve" and st["gates"][GATE]["by"] == "b"
    assert [e["by"] for e in of_kind(events(rd), "gate_approved", "gate_rejected")] == ["a", "b"]
    assert log_lines(tmp_path)[-1] == "ship"
