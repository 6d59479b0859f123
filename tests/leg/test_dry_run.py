"""--dry-run: every node's invocation rendered with the inputs; nothing runs, nothing is written."""

from __future__ import annotations

from pathlib import Path

from kit import omg_run, write_graph

GRAPH = """
    name: plan
    budget_usd: 5
    inputs:
      target: {default: prod}
    nodes:
      - id: build
        cwd: sub
        run: touch built.txt && echo {{ inputs.target }}
        env: {TARGET: "t={{ inputs.target }}"}
      - id: impl
        depends_on: [build]
        prompt: "Implement for {{ inputs.target }} using {{ artifacts.build }}"
        worktree: lane
        allowed_tools: [Read, Edit]
        budget_usd: 1.5
      - id: test
        depends_on: [impl]
        worktree: lane
        run: make test
        retry: {max: 1, on: [nonzero_exit]}
      - id: review
        depends_on: [test]
        prompt: "Review. Feedback so far: {{ feedback.review }}"
        budget_usd: 0.5
        timeout: 5m
        success_check:
          verify: {command: "grep -q {{ inputs.target }} report.txt"}
        feedback: {rerun: impl, max: 2}
"""


def test_a_dry_run_renders_every_invocation_and_runs_nothing(tmp_path: Path, omg) -> None:
    (tmp_path / "sub").mkdir()
    g = write_graph(tmp_path, GRAPH)
    r = omg_run(omg, g, "--dry-run", "-i", "target=x; touch pwned")
    assert r.code == 0, r.explain()
    out = r.out
    # nothing ran and nothing was written
    assert not (tmp_path / "sub" / "built.txt").exists()
    assert not (tmp_path / "runs").exists()
    assert not (tmp_path / ".omg").exists()
    assert not list(tmp_path.rglob("pwned"))
    assert "nothing was executed" in out

    # the command sh parses refers to the value; the value itself goes in the environment,
    # shown exactly (quoted as sh would need it to be typed)
    assert """sh -c 'touch built.txt && echo "${OMG_P1}"'""" in out
    assert "env: OMG_P1='x; touch pwned'   ({{ inputs.target }})" in out
    assert "env: TARGET='t=x; touch pwned'   (t={{ inputs.target }})" in out  # data too
    assert (
        "stdin (the prompt): 'Implement for x; touch pwned using <path of artifacts/build.out>'"
        in out
    )
    assert "-p --output-format stream-json --verbose" in out
    assert "--allowedTools Read,Edit" in out
    assert "--max-budget-usd 1.5" in out
    assert "<feedback of review, empty before round 1>" in out
    assert """verify: sh -c 'grep -q "${OMG_P1}" report.txt'""" in out
    assert out.count("env: OMG_P1='x; touch pwned'") == 2
    # cwd, timeout (default 20m), budget
    assert "cwd: sub" in out
    assert "worktree lane" in out
    assert "timeout: 20m" in out and "timeout: 5m" in out
    assert "budget: $1.50" in out
    # worst case: build 1 + impl 3 + test 3×2 + review 3 = 13 executions
    assert "worst case: 13 node execution(s)" in out
    assert "run budget $5.00" in out
    blocks = {b.split()[0]: b for b in out.split("\n- ")[1:]}
    assert "3 execution(s)" in blocks["impl"]
    assert "6 execution(s)" in blocks["test"]
    assert "1 execution(s)" in blocks["build"]


def test_a_dry_run_is_in_topological_order(tmp_path: Path, omg) -> None:
    g = write_graph(
        tmp_path,
        """
        name: order
        nodes:
          - {id: c, depends_on: [a], run: "true"}
          - {id: a, run: "true"}
          - {id: b, run: "true"}
    """,
    )
    r = omg_run(omg, g, "--dry-run")
    assert r.code == 0, r.explain()
    heads = [line.split()[1] for line in r.out.splitlines() if line.startswith("- ")]
    assert heads == ["a", "c", "b"]
