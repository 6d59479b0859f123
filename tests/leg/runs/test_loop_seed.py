"""Feedback loops as the seed specifies them: the per-execution ledger, payloads that keep the
reviewer's words and the latest verdict, hops reset by human decisions, the approved exhausted
loop's artifact, the dry run's advisories, and a start before every terminal event."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import Cli
from .helpers import events, of_kind, run_path, state, write_graph

# The reviewer fails the first two passes, each time writing its findings; the verify command
# checks the work independently.
VERIFY_LOOP = """\
name: vloop
nodes:
  - id: impl
    run: 'n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; echo "impl pass $((n+1))"'
  - id: review
    depends_on: [impl]
    run: 'echo "FINDINGS: pass $(cat n) misses the edge case"'
    success_check:
      verify: {command: 'test "$(cat n)" -ge 3 || { echo "count too low: $(cat n)"; exit 1; }'}
    feedback: {rerun: impl, max: 3}
"""


def test_the_ledger_has_one_row_per_execution_with_round_k_of_n(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, VERIFY_LOOP)
    res = cli("run", "g.yaml", "--run-id", "r")
    assert res.returncode == 0, res.stderr
    rows = [
        ln.split() for ln in res.stdout.splitlines() if ln.split()[:1] in (["impl"], ["review"])
    ]
    # NODE LEG VERDICT [(provenance)] ROUND …
    rounds = [(r[0], r[4] if r[3].startswith("(") else r[3]) for r in rows]
    assert rounds == [(n, k) for k in "012" for n in ("impl", "review")]
    assert "feedback round 2/3" in res.stdout and "fires round 1/3" in res.stdout
    by_node = cli("status", "r", "--by-node").stdout
    assert len([ln for ln in by_node.splitlines() if ln.startswith("impl ")]) == 1


def test_a_failing_verify_hands_back_the_reply_then_the_evidence(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, VERIFY_LOOP)
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 0
    retried = of_kind(events(run_path(tmp_path, "r")), "node_retried")
    assert [e["cause"] for e in retried] == ["verify_failed", "verify_failed"]
    payload = (run_path(tmp_path, "r") / "feedback" / "review.out").read_text()
    reply, evidence = payload.split("--- omg: verify evidence ---")
    assert "FINDINGS: pass 2 misses the edge case" in reply
    assert "exit code: 1 (expected 0)" in evidence and "count too low: 2" in evidence


EXHAUSTING = """\
name: exh
nodes:
  - id: impl
    run: '{ printf %s {{ feedback.review }} | tr "\\n" " "; echo; } >> seen.txt; echo impl'
  - id: review
    depends_on: [impl]
    run: |
      n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n
      echo "FINDINGS round $n"; exit 1
    feedback: {rerun: impl, max: 1}
"""


def test_after_retry_failed_the_first_pass_gets_the_final_findings(
    cli: Cli, tmp_path: Path
) -> None:
    write_graph(tmp_path, EXHAUSTING)
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 1
    payload = (run_path(tmp_path, "r") / "feedback" / "review.out").read_text()
    assert "FINDINGS round 2" in payload  # the exhausting failure, not the round before it
    assert cli("resume", "r", "--retry-failed").returncode == 1
    evs = events(run_path(tmp_path, "r"))
    leg2_impl = [e for e in of_kind(evs, "node_started", leg=2) if e["node_id"] == "impl"]
    assert leg2_impl and "round" not in leg2_impl[0]  # the fresh first pass of leg 2
    seen = [ln.strip() for ln in (tmp_path / "seen.txt").read_text().splitlines()]
    # leg 1: the first pass (no findings), round 1; leg 2: its first pass, then round 1
    assert seen == ["", "FINDINGS round 1", "FINDINGS round 2", "FINDINGS round 3"]


HOP_CAPPED = """\
name: hops
max_hops: 2
nodes:
  - id: impl
    run: echo impl
  - id: review
    depends_on: [impl]
    run: 'n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; test $n -ge 5'
    feedback: {rerun: impl, max: 3, stop_on_no_progress: false}
"""


def test_retry_failed_resets_the_hop_count_so_its_rounds_are_real(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, HOP_CAPPED)
    first = cli("run", "g.yaml", "--run-id", "r")
    assert first.returncode == 1 and "hop cap reached" in first.stdout
    assert "--retry-failed" in state(run_path(tmp_path, "r"))["nodes"]["review"]["detail"]
    again = cli("resume", "r", "--retry-failed")
    assert again.returncode == 0, again.stdout  # passes 4 and 5 ran: two fresh hops
    evs = events(run_path(tmp_path, "r"))
    start = of_kind(evs, "run_started", leg=2)[0]
    assert start["hops_reset"] is True and start["retry_failed"] is True
    fired = [e for e in of_kind(evs, "node_retried", leg=2) if e["reason"] == "feedback"]
    assert len(fired) == 1  # re-armed at round 0: pass 3 fails, fires once, pass 4 ... 5


GATED = """\
name: gated
nodes:
  - id: impl
    run: echo impl
  - id: review
    depends_on: [impl]
    run: 'echo "the work as it stands: v1"; exit 1'
    feedback: {rerun: impl, max: 1, on_exhausted: gate}
  - id: ship
    depends_on: [review]
    run: 'cat {{ artifacts.review }}'
"""


def test_approving_an_exhausted_loop_makes_its_last_reply_the_artifact(
    cli: Cli, tmp_path: Path
) -> None:
    write_graph(tmp_path, GATED)
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    res = cli("resume", "r", "--approve", "review.exhausted")
    assert res.returncode == 0, res.stderr + res.stdout
    rd = run_path(tmp_path, "r")
    assert (rd / "artifacts" / "review.out").read_text().strip() == "the work as it stands: v1"
    assert "the work as it stands: v1" in (rd / "artifacts" / "ship.out").read_text()
    decided = of_kind(events(rd), "gate_approved")[0]
    assert decided["hops_reset"] is True


def test_the_dry_run_prints_the_advisories_lint_prints(cli: Cli, tmp_path: Path) -> None:
    fan_in = """\
name: fanin
nodes:
  - id: spec
    run: echo spec
  - id: impl
    depends_on: [spec]
    run: echo impl
  - id: review
    depends_on: [impl, spec]
    run: echo ok
    feedback: {rerun: impl, max: 1}
"""
    write_graph(tmp_path, fan_in)
    lint = cli("lint", "g.yaml").stdout
    dry = cli("run", "g.yaml", "--dry-run").stdout
    said = [ln for ln in lint.splitlines() if re.match(r"g\.yaml:\d+: (warning|info):", ln)]
    assert said and all(ln in dry.splitlines() for ln in said)
    assert "worst case:" in dry


def test_a_placeholder_failure_follows_a_node_started(cli: Cli, tmp_path: Path) -> None:
    graph = """\
name: ph
nodes:
  - id: a
    run: echo a
    cwd: no-such-dir
"""
    write_graph(tmp_path, graph)
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 1
    kinds = [(e["event"], e.get("node_id")) for e in events(run_path(tmp_path, "r"))]
    assert kinds[1:3] == [("node_started", "a"), ("node_failed", "a")]
