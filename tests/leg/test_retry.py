"""Retries: causes, backoff, the fenced quote of the attempt being repeated, and its cost."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from kit import ScriptedClaude, of, omg_run, write_graph

from omg.graph.load import load_graph
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, start_run
from omg.runners.process import ProcResult, SpawnRequest, spawn


class RecordingSpawn:
    """The real spawner, remembering when each child started and ended."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], float, float]] = []

    def __call__(self, req: SpawnRequest) -> ProcResult:
        t0 = time.monotonic()
        res = spawn(req)
        self.calls.append((req.argv, t0, time.monotonic()))
        return res


def test_a_listed_cause_is_retried_until_it_passes(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: flaky
        nodes:
          - id: flaky
            run: |
              n=$(cat tries 2>/dev/null || echo 0); n=$((n+1)); echo $n > tries
              if [ "$n" -lt 3 ]; then echo "transient $n"; exit 1; fi
              echo "ok on try $n"
            retry: {max: 3, on: [nonzero_exit]}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    retried = of(r.events(), "node_retried", "flaky")
    assert [(e["reason"], e["retries"], e["cause"]) for e in retried] == [
        ("retry", 1, "nonzero_exit"),
        ("retry", 2, "nonzero_exit"),
    ]
    assert "transient 1" in retried[0]["detail"]
    rec = state["nodes"]["flaky"]
    assert (rec["verdict"], rec["attempts"], rec["detail"]) == ("PASS", 3, "passed after 2 retries")
    assert r.artifact("flaky") == "ok on try 3\n"
    assert "retries: 2" in r.out


def test_an_unlisted_cause_is_not_retried(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: notlisted
        nodes:
          - id: once
            run: 'echo x >> tries; exit 1'
            retry: {max: 3, on: [timeout, run_error]}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    assert of(r.events(), "node_retried") == []
    assert (tmp_path / "tries").read_text() == "x\n"
    assert state["nodes"]["once"]["attempts"] == 1


def test_retries_run_out(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: hopeless
        nodes:
          - id: never
            run: 'echo x >> tries; exit 3'
            retry: {max: 2, on: [nonzero_exit]}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    rec = state["nodes"]["never"]
    assert (rec["verdict"], rec["attempts"], rec["cause"]) == ("FAIL", 3, "nonzero_exit")
    assert (tmp_path / "tries").read_text() == "x\nx\nx\n"


def test_backoff_delays_are_respected(tmp_path: Path, run_dir_check) -> None:
    # initial 200ms, ×4, capped at 500ms: waits of 0.2s, 0.5s, 0.5s between the four attempts
    # (without the factor the second wait would be 0.2s; without the cap the third 3.2s)
    g = write_graph(
        tmp_path,
        """
        name: backoff
        nodes:
          - id: flaky
            run: 'n=$(cat tries 2>/dev/null || echo 0); echo $((n+1)) > tries; test $n -ge 3'
            retry:
              max: 3
              on: [nonzero_exit]
              backoff: {initial: 200ms, factor: 4, max: 500ms}
    """,
    )
    rec = RecordingSpawn()
    env = Environment(
        runs_dir=tmp_path / "runs",
        root=tmp_path,
        parent_env=dict(os.environ),
        spawn=rec,
    )
    end = start_run(load_graph(g), g, {}, env, LegOptions(concurrency=1), run_id="b1")
    rid, result = end.run_id, end.result
    assert result is not None
    assert result.outcome == "passed"
    run_dir_check(tmp_path / "runs" / rid)
    assert len(rec.calls) == 4
    gaps = [rec.calls[i + 1][1] - rec.calls[i][2] for i in range(3)]
    for gap, want in zip(gaps, (0.2, 0.5, 0.5), strict=True):
        assert want <= gap < want + 1.0, gaps


def test_an_agent_retry_quotes_the_attempt_it_repeats(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    claude.replies(
        [
            {"result": "I looked around; first reply", "cost": 0.01},
            {"result": "Still thinking; second reply", "cost": 0.01},
            {"result": "**DONE** — third reply", "cost": 0.01},
        ]
    )
    g = write_graph(
        tmp_path,
        """
        name: agentretry
        nodes:
          - id: impl
            prompt: Implement the feature and start your reply with DONE.
            success_check: {exit_zero: true, result_matches: '^[*_`\\s]*DONE\\b'}
            retry: {max: 2, on: [result_mismatch]}
    """,
    )
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)

    prompts = claude.prompts()
    assert len(prompts) == 3
    base = "Implement the feature and start your reply with DONE."
    assert prompts[0] == base
    for prompt, quoted, not_quoted in (
        (prompts[1], "first reply", "second reply"),
        (prompts[2], "second reply", "first reply"),
    ):
        assert prompt.startswith(base)
        # exactly one fenced quote of the previous attempt, nothing of older ones
        fences = re.findall(r"^(omg-attempt-[0-9a-f]+)$", prompt, re.M)
        assert len(fences) == 2 and fences[0] == fences[1], prompt
        inside = prompt.split(f"\n{fences[0]}\n")[1]
        assert quoted in inside
        assert not_quoted not in prompt
        assert prompt.count(quoted) == 1
        assert "did NOT pass" in prompt
        # the check itself is withheld
        assert "result_matches" not in prompt and "[*_`" not in prompt
    # every retry is a fresh session
    sessions = [c["argv"][c["argv"].index("--session-id") + 1] for c in claude.calls()]
    assert len(set(sessions)) == 3

    # every attempt's cost is counted: 3 × $0.01
    rec = state["nodes"]["impl"]
    assert rec["attempts"] == 3
    assert rec["cost_usd"] == pytest.approx(0.03)
    assert state["cost_usd"] == pytest.approx(0.03)
    assert [e["cost_usd"] for e in of(r.events(), "node_retried", "impl")] == [0.01, 0.01]
    assert "TOTAL COST: $0.0300" in r.out


def test_an_unjudged_failure_is_retried_without_a_quote(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    # an API error is not a judgment of the work: the retry gets the plain prompt
    claude.replies(
        [
            {"result": "API Error: overloaded", "is_error": True, "cost": 0.0},
            {"result": "DONE"},
        ]
    )
    g = write_graph(
        tmp_path,
        """
        name: apierror
        nodes:
          - id: impl
            prompt: Do it.
            retry: {max: 1, on: [run_error]}
    """,
    )
    r = omg_run(omg, g, env=claude.env())
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert claude.prompts() == ["Do it.", "Do it."]
