"""Feedback arcs end to end: rounds, payloads, exhaustion, env failures, the hop cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import ScriptedClaude, of, omg_run, write_graph

CONVERGING = """
    name: loop
    nodes:
      - id: setup
        run: echo "spec v1"
      - id: side
        run: echo "independent"
      - id: impl
        depends_on: [setup]
        run: |
          n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
          printf '[%s]\\n' {{ feedback.review }} >> feedback.log
          echo "impl pass $n"
      - id: test
        depends_on: [impl]
        run: echo "tested pass $(cat count)"
      - id: review
        depends_on: [test, setup]
        run: |
          n=$(cat count)
          if [ "$n" -lt 3 ]; then echo "FIX: pass $n is not good enough"; exit 1; fi
          echo "SHIP IT after $n passes"
        success_check: {exit_zero: true, result_matches: '^[*_`\\s]*SHIP IT\\b'}
        feedback: {rerun: impl, max: 3}
"""


def test_a_loop_converges_in_round_two(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(tmp_path, CONVERGING)
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    evs = r.events()

    # the declarer's non-final failures are node_retried, never node_failed
    fired = of(evs, "node_retried", "review")
    assert [(e["reason"], e["round"], e["cause"], e["detail"]) for e in fired] == [
        ("feedback", 1, "nonzero_exit", "feedback round 1/3: re-running impl → review"),
        ("feedback", 2, "nonzero_exit", "feedback round 2/3: re-running impl → review"),
    ]
    assert of(evs, "node_failed") == []

    # the whole body re-runs in dependency order each round, and its events carry the round
    body_starts = [
        (e["node_id"], e.get("round", 0))
        for e in of(evs, "node_started")
        if e["node_id"] in ("impl", "test", "review")
    ]
    assert body_starts == [(n, k) for k in (0, 1, 2) for n in ("impl", "test", "review")]
    for nid in ("impl", "test", "review"):
        assert [e.get("round", 0) for e in of(evs, "node_passed", nid)] == (
            [0, 1, 2] if nid != "review" else [2]
        )
    # out-of-body parents and independent branches ran once and stayed satisfied
    assert len(of(evs, "node_started", "setup")) == 1
    assert len(of(evs, "node_started", "side")) == 1

    # {{ feedback.review }} is empty before round 1, then the declarer's latest reply
    assert (tmp_path / "feedback.log").read_text().splitlines() == [
        "[]",
        "[FIX: pass 1 is not good enough",
        "]",
        "[FIX: pass 2 is not good enough",
        "]",
    ]
    assert (r.dir / "feedback" / "review.out").read_text() == "FIX: pass 2 is not good enough\n"

    # records carry their round; the run counts its re-entries
    nodes = state["nodes"]
    assert (nodes["review"]["verdict"], nodes["review"]["round"], nodes["review"]["attempts"]) == (
        "PASS",
        2,
        3,
    )
    assert nodes["review"]["provenance"] == "self-reported"
    assert (nodes["impl"]["round"], nodes["impl"]["attempts"]) == (2, 3)
    assert (nodes["setup"]["round"], nodes["setup"]["attempts"]) == (0, 1)
    assert state["hops"] == 2
    assert r.artifact("review") == "SHIP IT after 3 passes\n"
    assert "feedback round 1/3: re-running impl → review" in r.err
    assert "feedback rounds: 2" in r.out


def test_an_exhausted_loop_fails_once_with_the_spend_named(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: exhaust
        nodes:
          - id: impl
            run: echo "implemented"
          - id: review
            depends_on: [impl]
            run: 'echo "FIX: still wrong"; exit 1'
            retry: {max: 1, on: [nonzero_exit]}
            feedback: {rerun: impl, max: 2, stop_on_no_progress: false}
          - id: after
            depends_on: [review]
            run: echo never
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    evs = r.events()

    failed = of(evs, "node_failed")
    assert [e["node_id"] for e in failed] == ["review"]  # node_failed at most once per declarer
    detail = failed[0]["detail"]
    assert detail.startswith(
        "feedback exhausted after 2 round(s) of impl → review: nonzero_exit"
    ), detail
    assert failed[0]["round"] == 2
    # the arc fires only after the declarer's own retries are spent, each round
    reasons = [e["reason"] for e in of(evs, "node_retried", "review")]
    assert reasons == ["retry", "feedback", "retry", "feedback", "retry"]
    assert len(of(evs, "node_started", "impl")) == 3
    assert of(evs, "node_started", "after") == []

    rec = state["nodes"]["review"]
    assert (rec["verdict"], rec["round"], rec["attempts"], rec["cause"]) == (
        "FAIL",
        2,
        6,
        "nonzero_exit",
    )
    assert (r.dir / "failed" / "review.out").read_text() == "FIX: still wrong\n"
    assert state["status"] == "failed"
    assert "feedback exhausted after 2 round(s) of impl → review" in r.err


@pytest.mark.parametrize(
    ("check", "what"),
    [
        ("run: no-such-command-omg-test --review", "shell node exit 127"),
        ("run: 'touch tool; ./tool'", "shell node exit 126"),
        (
            "run: echo fine\n    success_check:\n"
            "      verify: {command: no-such-verifier-omg-test}",
            "verify command not found",
        ),
    ],
)
def test_an_environment_failure_never_loops(
    tmp_path: Path, omg, run_dir_check, check: str, what: str
) -> None:
    g = write_graph(
        tmp_path,
        f"""
name: envfail
nodes:
  - id: impl
    run: echo "implemented"
  - id: review
    depends_on: [impl]
    {check}
    feedback: {{rerun: impl, max: 3}}
""",
    )
    r = omg_run(omg, g)
    assert r.code == 1, (what, r.explain())
    state = run_dir_check(r.dir)
    evs = r.events()
    assert of(evs, "node_retried") == [], what
    assert len(of(evs, "node_started", "impl")) == 1, what
    rec = state["nodes"]["review"]
    assert (rec["verdict"], rec["cause"], rec["judged"], rec["round"]) == (
        "FAIL",
        "run_error",
        False,
        0,
    ), what
    assert "environment failure" in rec["detail"], rec["detail"]
    assert "feedback exhausted" not in rec["detail"]
    assert state["hops"] == 0
    assert not (r.dir / "feedback" / "review.out").exists()


def test_a_timeout_in_the_declarer_never_loops(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: slowreview
        nodes:
          - id: impl
            run: echo "implemented"
          - id: review
            depends_on: [impl]
            run: sleep 5
            timeout: 300ms
            feedback: {rerun: impl, max: 3}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    assert of(r.events(), "node_retried") == []
    assert state["nodes"]["review"]["cause"] == "timeout"
    assert state["hops"] == 0


def test_a_failing_verify_hands_its_evidence_to_the_rerun(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: verified
        nodes:
          - id: impl
            run: |
              n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count
              printf 'got: %s\\n' {{ feedback.review }}
          - id: review
            depends_on: [impl]
            run: echo "looks fine to me"
            success_check:
              exit_zero: true
              verify:
                command: >-
                  test "$(cat count)" -ge 2 ||
                  { echo "count too low: $(cat count)"; exit 1; }
            feedback: {rerun: impl, max: 2}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    fired = of(r.events(), "node_retried", "review")
    assert [(e["reason"], e["cause"]) for e in fired] == [("feedback", "verify_failed")]
    payload = (r.dir / "feedback" / "review.out").read_text()
    assert "--- omg: verify evidence ---" in payload and "exit code: 1 (expected 0)" in payload
    assert "count too low: 1" in payload
    assert "count too low: 1" in r.artifact("impl")
    assert state["nodes"]["review"]["provenance"] == "verified"
    assert state["nodes"]["review"]["round"] == 1


def test_the_hop_cap_stops_loops_run_wide(tmp_path: Path, omg, run_dir_check) -> None:
    # two loops, each with rounds to spare; the run-wide cap of 2 re-entries ends the second
    g = write_graph(
        tmp_path,
        """
        name: hops
        max_hops: 2
        nodes:
          - id: a-impl
            run: 'n=$(cat a 2>/dev/null || echo 0); echo $((n+1)) > a; echo a'
          - id: a-review
            depends_on: [a-impl]
            run: 'test "$(cat a)" -ge 2 && echo ok || { echo "FIX a"; exit 1; }'
            feedback: {rerun: a-impl, max: 5}
          - id: b-impl
            depends_on: [a-review]
            run: echo b
          - id: b-review
            depends_on: [b-impl]
            run: 'echo "FIX b"; exit 1'
            feedback: {rerun: b-impl, max: 5}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    evs = r.events()
    assert [e["node_id"] for e in of(evs, "node_retried")] == ["a-review", "b-review"]
    failed = of(evs, "node_failed")
    assert [e["node_id"] for e in failed] == ["b-review"]
    detail = failed[0]["detail"]
    assert "hop cap" in detail and "max_hops: 2" in detail, detail
    assert state["hops"] == 2
    assert len(of(evs, "node_started", "b-impl")) == 2


def test_the_default_hop_cap_is_64(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: manyhops
        nodes:
          - {id: impl, run: "true"}
          - id: review
            depends_on: [impl]
            run: exit 1
            feedback: {rerun: impl, max: 100, stop_on_no_progress: false}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    assert state["hops"] == 64
    assert "max_hops: 64" in state["nodes"]["review"]["detail"]
    assert len(of(r.events(), "node_started", "impl")) == 65


def test_an_agent_review_loop_prices_every_round(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    # impl and review are both agents: impl, review, impl, review in that order
    claude.replies(
        [
            {"result": "DONE: first draft", "cost": 0.01},
            {"result": "Needs work: rename foo to bar", "cost": 0.02},
            {"result": "DONE: renamed", "cost": 0.01},
            {"result": "**SHIP IT** — looks good", "cost": 0.04},
        ]
    )
    g = write_graph(
        tmp_path,
        """
        name: agents
        nodes:
          - id: impl
            prompt: |
              Implement the thing.
              Review feedback, empty on the first pass: <<{{ feedback.review }}>>
            success_check: {exit_zero: true, result_matches: '^[*_`\\s]*DONE\\b'}
          - id: review
            depends_on: [impl]
            prompt: "Review {{ artifacts.impl | inline }}. Start with SHIP IT or list fixes."
            success_check: {exit_zero: true, result_matches: '^[*_`\\s]*SHIP IT\\b'}
            feedback: {rerun: impl, max: 2}
    """,
    )
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    evs = r.events()

    prompts = claude.prompts()
    assert len(prompts) == 4
    assert "<<>>" in prompts[0]
    assert "<<Needs work: rename foo to bar>>" in prompts[2]
    assert "DONE: renamed" in prompts[3]
    # every re-run is a fresh session
    sessions = [c["argv"][c["argv"].index("--session-id") + 1] for c in claude.calls()]
    assert len(set(sessions)) == 4
    assert not any("--resume" in c["argv"] for c in claude.calls())

    fired = of(evs, "node_retried", "review")
    assert len(fired) == 1
    assert fired[0]["cost_usd"] == pytest.approx(0.02)  # the declarer's spend on the arc
    assert fired[0]["detail"] == "feedback round 1/2: re-running impl → review"
    nodes = state["nodes"]
    # a record's cost accumulates over its rounds; the run total is the sum
    assert nodes["review"]["cost_usd"] == pytest.approx(0.06)
    assert nodes["impl"]["cost_usd"] == pytest.approx(0.02)
    assert state["cost_usd"] == pytest.approx(0.08)
    assert nodes["review"]["round"] == 1
    assert "TOTAL COST: $0.0800" in r.out


def test_a_diamond_body_reruns_in_dependency_order(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: diamond
        concurrency: 3
        nodes:
          - id: impl
            run: 'n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; echo impl'
          - id: lint
            depends_on: [impl]
            run: sleep 0.1; echo lint
          - id: test
            depends_on: [impl]
            run: sleep 0.1; echo test
          - id: review
            depends_on: [lint, test]
            run: 'test "$(cat count)" -ge 2 || { echo "FIX it"; exit 1; }'
            feedback: {rerun: impl, max: 2}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    evs = r.events()
    for k in (0, 1):
        at = {
            (e["event"], e["node_id"]): i
            for i, e in enumerate(evs)
            if e.get("round", 0) == k and e["event"] in ("node_started", "node_passed")
        }
        for parent, child in (
            ("impl", "lint"),
            ("impl", "test"),
            ("lint", "review"),
            ("test", "review"),
        ):
            assert at[("node_passed", parent)] < at[("node_started", child)], (k, parent, child)
    # lint and test of one round ran side by side
    starts = [e["node_id"] for e in evs if e["event"] == "node_started" and e.get("round") == 1]
    assert starts == ["impl", "lint", "test", "review"]


def test_two_loops_turn_independently_side_by_side(tmp_path: Path, omg, run_dir_check) -> None:
    # two branches, each with its own arc, running concurrently; they converge in different
    # rounds and neither disturbs the other
    branch = """
          - id: {p}-impl
            run: 'n=$(cat {p} 2>/dev/null || echo 0); echo $((n+1)) > {p}; sleep 0.05; echo {p}'
          - id: {p}-review
            depends_on: [{p}-impl]
            run: 'test "$(cat {p})" -ge {need} || {{ echo "FIX {p}"; exit 1; }}'
            feedback: {{rerun: {p}-impl, max: 3, stop_on_no_progress: false}}
    """
    g = write_graph(
        tmp_path,
        "name: twoloops\nconcurrency: 2\nnodes:\n"
        + branch.format(p="a", need=3)
        + branch.format(p="b", need=2),
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    evs = r.events()
    assert [e["round"] for e in of(evs, "node_retried", "a-review")] == [1, 2]
    assert [e["round"] for e in of(evs, "node_retried", "b-review")] == [1]
    assert [e.get("round", 0) for e in of(evs, "node_started", "a-impl")] == [0, 1, 2]
    assert [e.get("round", 0) for e in of(evs, "node_started", "b-impl")] == [0, 1]
    assert state["nodes"]["a-review"]["round"] == 2
    assert state["nodes"]["b-review"]["round"] == 1
    assert state["hops"] == 3


def test_continue_prunes_an_exhausted_loop_and_runs_the_rest(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: continueloop
        on_fail: continue
        concurrency: 1
        nodes:
          - {id: impl, run: echo impl}
          - id: review
            depends_on: [impl]
            run: 'echo "FIX"; exit 1'
            feedback: {rerun: impl, max: 1}
          - {id: ship, depends_on: [review], run: echo never}
          - {id: docs, run: echo docs}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    assert state["nodes"]["docs"]["verdict"] == "PASS"
    assert state["nodes"]["review"]["verdict"] == "FAIL"
    assert "ship" not in state["nodes"]
    assert [e["node_id"] for e in of(r.events(), "node_failed")] == ["review"]
