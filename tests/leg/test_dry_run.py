"""--dry-run: every node's invocation rendered with the inputs; nothing runs, nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
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


def _flag(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_an_agent_after_spend_in_the_leg_is_shown_what_is_left_not_the_whole_budget(
    tmp_path: Path, omg, claude
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: two
        budget_usd: 5
        nodes:
          - {id: d1, prompt: First.}
          - {id: d2, depends_on: [d1], prompt: Second.}
        """,
    )
    shown = omg_run(omg, g, "--dry-run", env=claude.env())
    assert shown.code == 0, shown.explain()
    d1, d2 = (shown.out[shown.out.index(f"- {n} [agent]") :].splitlines()[1] for n in ("d1", "d2"))
    assert "--max-budget-usd 5.0 " in d1  # nothing is spent before d1 starts: all of it
    assert "--max-budget-usd '<what is left of $5.00 when it starts>'" in d2
    # and what the run gives d2 is indeed what d1 left of the budget, not the whole
    claude.replies([{"result": "DONE", "cost": 0.25}])
    ran = omg_run(omg, g, env=claude.env())
    assert ran.code == 0, ran.explain()
    given = [_flag(c["argv"], "--max-budget-usd") for c in claude.calls()]
    assert given == ["5.0", "4.75"]


def _plan(
    tmp_path: Path,
    nodes: list[str],
    head: str = "",
    spent: float = 0.0,
    passed: frozenset[str] = frozenset(),
) -> str:
    """render_plan's text for a graph with a $5 run budget and ``nodes``."""
    from omg.graph.load import load_graph
    from omg.leg.dryrun import render_plan

    path = tmp_path / "g.yaml"
    body = "".join(f"  - {node}\n" for node in nodes)
    path.write_text(f"name: t\nbudget_usd: 5\n{head}nodes:\n{body}")
    return render_plan(load_graph(path), path, {}, spent=spent, passed=passed)


A = "{id: a, prompt: x}"
B = "{id: b, prompt: y}"
CASES = [  # (nodes, concurrency, the agents shown what is left when they start)
    ([A, "{id: b, depends_on: [a], prompt: y}"], 4, {"b"}),
    ([A, B], 2, set()),  # both start at once
    ([A, B], 1, {"b"}),  # b waits for a's slot
    ([A, B, "{id: c, prompt: z}"], 2, {"c"}),
    (["{id: s, run: 'true'}", "{id: a, depends_on: [s], prompt: x}"], 4, set()),  # one agent
    ([A, "{id: s, run: 'true', depends_on: [a]}", "{id: b, depends_on: [s], prompt: y}"], 4, {"b"}),
    # b starts at once; a when s is done, maybe after b spent
    (["{id: s, run: 'true'}", "{id: a, depends_on: [s], prompt: x}", B], 4, {"a"}),
]


@pytest.mark.parametrize(("nodes", "concurrency", "later"), CASES)
def test_which_agents_a_dry_run_shows_what_is_left_of_the_run_budget(
    tmp_path: Path, nodes: list[str], concurrency: int, later: set[str]
) -> None:
    out = _plan(tmp_path, nodes, f"concurrency: {concurrency}\n")
    argv = {block.split()[0]: block.splitlines()[1] for block in out.split("\n- ")[1:]}
    shown = {n for n, line in argv.items() if "<what is left of $5.00 when it starts>" in line}
    exact = {n for n, line in argv.items() if "--max-budget-usd 5.0 " in line}
    assert shown == later
    assert exact == {n for n in argv if n not in later and "claude" in argv[n]}


def test_a_node_budget_under_the_run_budget_is_shown_as_the_most_it_gets(tmp_path: Path) -> None:
    nodes = [A, "{id: b, depends_on: [a], prompt: y, budget_usd: 1.5}"]
    out = _plan(tmp_path, nodes)
    assert "--max-budget-usd '<what is left of $5.00 when it starts, at most $1.50>'" in out
    # once a passed a leg before, b is the first to spend: the figure is exact again
    resumed = _plan(tmp_path, nodes, spent=4.0, passed=frozenset({"a"}))
    assert "--max-budget-usd 1.0 " in resumed


def test_a_codex_dry_run_shows_its_token_budget(tmp_path: Path) -> None:
    out = _plan(
        tmp_path, [A, "{id: c, depends_on: [a], runtime: codex, prompt: y, budget_tokens: 400000}"]
    )
    block = out[out.index("- c [agent]") :]
    assert "what is left" not in block.splitlines()[1]  # codex's argv carries no dollar budget
    assert "budget: 400000 tokens an execution" in block
