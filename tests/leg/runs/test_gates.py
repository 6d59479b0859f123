"""Gates across processes: pause, approve, reject, who decided, and decisions that are refused."""

from __future__ import annotations

import getpass
from pathlib import Path

from .conftest import Cli
from .helpers import child_env, events, launches, log_lines, of_kind, run_path, state, write_graph

GATED = """\
name: gated
nodes:
  - id: build
    run: echo build >> log.txt
  - id: slow
    run: sleep 0.4; echo slow >> log.txt
  - id: review
    type: gate
    description: Is the build good enough to ship?
    depends_on: [build]
  - id: ship
    depends_on: [review]
    run: echo ship >> log.txt
"""


def paused_run(cli: Cli, tmp_path: Path, rid: str = "r") -> Path:
    write_graph(tmp_path, GATED)
    res = cli("run", "g.yaml", "--run-id", rid, "--concurrency", "2")
    assert res.returncode == 4, res.stderr
    return run_path(tmp_path, rid)


def test_gate_pauses_after_in_flight_nodes_finish_and_persists_before_exit_4(
    cli: Cli, tmp_path: Path
) -> None:
    rd = paused_run(cli, tmp_path)
    evs = events(rd)
    kinds = [e["event"] for e in evs]
    # slow was in flight when the gate paused the leg: it finished and was recorded first.
    assert kinds.index("gate_paused") < kinds.index("run_finished")
    slow_pass = next(
        i for i, e in enumerate(evs) if e["event"] == "node_passed" and e["node_id"] == "slow"
    )
    assert slow_pass < kinds.index("run_finished")
    assert of_kind(evs, "gate_paused")[0]["description"] == "Is the build good enough to ship?"
    fin = evs[-1]
    assert fin["event"] == "run_finished"
    assert (fin["outcome"], fin["reason"], fin["paused_at"]) == ("paused", "gate", "review")
    st = state(rd)
    assert st["paused_at"] == "review" and st["status"] == "paused"
    assert "review" not in st["nodes"] and "ship" not in st["nodes"]
    assert sorted(log_lines(tmp_path)) == ["build", "slow"]
    out = cli("status")
    assert "paused at gate review" in out.stdout


def test_approve_records_who_why_when_and_the_state_judged(cli: Cli, tmp_path: Path) -> None:
    rd = paused_run(cli, tmp_path)
    judged_seq = state(rd)["seq"]
    res = cli("resume", "r", "--approve", "review", "--by", "alice", "--reason", "looks right")
    assert res.returncode == 0, res.stderr
    evs = events(rd)
    leg2 = [e for e in evs if e["leg"] == 2]
    assert [e["event"] for e in leg2[:3]] == ["run_started", "gate_approved", "node_passed"]
    approved = leg2[1]
    assert approved["by"] == "alice" and approved["reason"] == "looks right"
    assert approved["state_ref"] == f"seq:{judged_seq}"
    passed = leg2[2]
    assert passed["node_id"] == "review" and passed["provenance"] == "approved"
    st = state(rd)
    gate = st["gates"]["review"]
    assert gate["decision"] == "approve" and gate["by"] == "alice"
    assert gate["reason"] == "looks right" and gate["at"] == approved["ts"]
    assert gate["state_ref"] == f"seq:{judged_seq}"
    assert st["nodes"]["review"]["verdict"] == "PASS"
    assert st["nodes"]["review"]["provenance"] == "approved"
    assert st["status"] == "passed" and st["paused_at"] is None
    # Nothing before the gate ran again; ship ran once.
    assert sorted(log_lines(tmp_path)) == ["build", "ship", "slow"]
    assert launches(evs, leg=2) == [("ship", 0)]


def test_decider_defaults_to_github_actor_then_the_os_user(cli: Cli, tmp_path: Path) -> None:
    paused_run(cli, tmp_path, "ci")
    paused_run(cli, tmp_path, "local")
    res = cli("resume", "ci", "--approve", "review", env=child_env(GITHUB_ACTOR="octocat"))
    assert res.returncode == 0, res.stderr
    assert state(run_path(tmp_path, "ci"))["gates"]["review"]["by"] == "octocat"
    res = cli("resume", "local", "--approve", "review")
    assert res.returncode == 0, res.stderr
    assert state(run_path(tmp_path, "local"))["gates"]["review"]["by"] == getpass.getuser()


def test_reject_fails_the_gate_and_prunes_what_depends_on_it(cli: Cli, tmp_path: Path) -> None:
    rd = paused_run(cli, tmp_path)
    res = cli("resume", "r", "--reject", "review", "--reason", "tests are flaky", "--by", "bob")
    assert res.returncode == 1, res.stderr
    evs = events(rd)
    leg2 = [e["event"] for e in evs if e["leg"] == 2]
    assert leg2 == ["run_started", "gate_rejected", "node_failed", "run_finished"]
    st = state(rd)
    assert st["gates"]["review"]["decision"] == "reject"
    assert st["gates"]["review"]["reason"] == "tests are flaky"
    assert st["nodes"]["review"]["verdict"] == "FAIL"
    assert "ship" not in st["nodes"] and st["status"] == "failed"
    # A rejection is a standing decision: --retry-failed does not re-open it.
    again = cli("resume", "r", "--retry-failed")
    assert again.returncode == 1, again.stderr
    assert "nothing to do" in again.stdout
    assert len(state(rd)["legs"]) == 2
    assert "ship" not in log_lines(tmp_path)


def test_reject_follows_on_fail_continue(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        """\
name: cont
on_fail: continue
nodes:
  - id: gate
    type: gate
  - id: after
    depends_on: [gate]
    run: echo after >> log.txt
  - id: other
    depends_on: [late]
    run: echo other >> log.txt
  - id: late
    run: echo late >> log.txt
""",
    )
    assert cli("run", "g.yaml", "--run-id", "r", "-c", "1").returncode == 4
    res = cli("resume", "r", "--reject", "gate", "--reason", "no")
    assert res.returncode == 1, res.stderr
    st = state(run_path(tmp_path, "r"))
    assert st["nodes"]["gate"]["verdict"] == "FAIL"
    assert "after" not in st["nodes"]
    assert st["nodes"]["other"]["verdict"] == "PASS"
    assert sorted(log_lines(tmp_path)) == ["late", "other"]


def test_decisions_that_are_refused_leave_the_run_untouched(cli: Cli, tmp_path: Path) -> None:
    rd = paused_run(cli, tmp_path)
    before = (rd / "state.json").read_bytes(), (rd / "events.jsonl").read_bytes()

    bare = cli("resume", "r")
    assert bare.returncode == 3
    assert "paused at gate 'review'" in bare.stderr and "--approve review" in bare.stderr

    wrong = cli("resume", "r", "--approve", "ship")
    assert wrong.returncode == 3
    assert "'ship'" in wrong.stderr and "paused at 'review'" in wrong.stderr

    unknown = cli("resume", "r", "--reject", "nope", "--reason", "x")
    assert unknown.returncode == 3

    no_reason = cli("resume", "r", "--reject", "review")
    assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
    both = cli("resume", "r", "--approve", "review", "--reject", "review", "--reason", "x")
    assert both.returncode == 2
    mixed = cli("resume", "r", "--approve", "review", "--retry-failed")
    assert mixed.returncode == 2

    for res in (bare, wrong, unknown, no_reason, both, mixed):
        assert "Traceback" not in res.stderr
    assert ((rd / "state.json").read_bytes(), (rd / "events.jsonl").read_bytes()) == before


def test_a_recorded_decision_is_never_re_asked(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        """\
name: two-gates
nodes:
  - id: first
    type: gate
  - id: mid
    depends_on: [first]
    run: echo mid >> log.txt
  - id: second
    type: gate
    depends_on: [mid]
  - id: end
    depends_on: [second]
    run: echo end >> log.txt
""",
    )
    rd = run_path(tmp_path, "r")
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    assert cli("resume", "r", "--approve", "first", "--by", "a").returncode == 4
    assert state(rd)["paused_at"] == "second"
    before = (rd / "events.jsonl").read_bytes()
    for args in (("--approve", "first"), ("--reject", "first", "--reason", "changed my mind")):
        res = cli("resume", "r", *args)
        assert res.returncode == 3
        assert "already decided" in res.stderr and "approve by a" in res.stderr
    assert (rd / "events.jsonl").read_bytes() == before
    assert cli("resume", "r", "--approve", "second", "--by", "b").returncode == 0
    # Later legs replay the first decision from state; nobody was asked about it again.
    evs = events(rd)
    assert [e["node_id"] for e in of_kind(evs, "gate_paused")] == ["first", "second"]
    assert [e["node_id"] for e in of_kind(evs, "gate_approved")] == ["first", "second"]
    assert state(rd)["gates"]["first"]["by"] == "a"
    res = cli("resume", "r", "--approve", "second")
    assert res.returncode == 3 and "already decided" in res.stderr
    assert log_lines(tmp_path) == ["mid", "end"]


def test_the_pause_message_says_what_the_gate_asks(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, GATED)
    res = cli("run", "g.yaml", "--run-id", "q")
    assert res.returncode == 4
    assert "Paused at gate 'review': Is the build good enough to ship?" in res.stdout
