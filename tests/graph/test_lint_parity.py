"""Lint parity: a verdict no check reads, an unanchored result_matches, bypassPermissions, a
max_hops below the loops' worst case, a loop that never quotes its feedback — each a warning
at the file and line to fix, saying how."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kit import omg_in_process, write_graph

from omg.graph.verdicts import verdict_tokens


def findings(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    path = write_graph(tmp_path, text, "g.yaml")
    done = omg_in_process("lint", "--format", "json", str(path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # warnings, not errors
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return [f for f in found if f["severity"] == "warning"]


def only(found: list[dict[str, Any]], code: str) -> dict[str, Any]:
    [hit] = [f for f in found if f["code"] == code]
    return hit


UNREAD = """\
name: g
nodes:
  - id: review
    allowed_tools: [Read]
    prompt: |
      Review the change.
      End your reply with `APPROVED` or `CHANGES_REQUESTED`.
"""


def test_a_verdict_no_check_reads_is_named_at_the_prompt(tmp_path: Path) -> None:
    hit = only(findings(tmp_path, UNREAD), "verdict-unread")
    assert (hit["line"], hit["node"]) == (5, "review")
    assert "APPROVED / CHANGES_REQUESTED" in hit["message"]
    assert "result_matches: '(?m)^APPROVED$'" in hit["message"]


def test_a_verdict_a_check_reads_is_quiet(tmp_path: Path) -> None:
    read = UNREAD.replace(
        "    allowed_tools: [Read]\n",
        "    allowed_tools: [Read]\n"
        "    success_check: {exit_zero: true, result_matches: '(?m)^APPROVED$'}\n",
    )
    found = findings(tmp_path, read)
    assert not [f for f in found if f["code"] in ("verdict-unread", "result-unanchored")]
    said = verdict_tokens("Say VERDICT: PASS or VERDICT: FAIL.")
    assert said == ["VERDICT: PASS", "VERDICT: FAIL"]
    assert verdict_tokens("Write the README in Markdown. Use the API.") == []


def test_an_unanchored_result_matches_is_named_at_its_line(tmp_path: Path) -> None:
    graph = """\
name: g
nodes:
  - id: a
    run: echo APPROVED
    success_check:
      exit_zero: true
      result_matches: APPROVED
  - id: b
    run: echo ok
    success_check: {exit_zero: true, result_matches: '(?m)^ok$'}
"""
    found = findings(tmp_path, graph)
    hit = only(found, "result-unanchored")
    assert (hit["line"], hit["node"]) == (7, "a")
    assert "'NOT APPROVED'" in hit["message"] and "'(?m)^APPROVED$'" in hit["message"]


def test_bypass_permissions_names_the_root_rule_and_the_sandbox_way_out(tmp_path: Path) -> None:
    graph = """\
name: g
nodes:
  - id: a
    prompt: do it
    allowed_tools: [Bash]
    permission_mode: bypassPermissions
"""
    hit = only(findings(tmp_path, graph), "bypass-permissions")
    assert (hit["line"], hit["node"]) == (6, "a")
    assert "as root" in hit["message"] and "IS_SANDBOX" in hit["message"]
    sandboxed = graph + "    env: {IS_SANDBOX: '1'}\n"
    assert not [f for f in findings(tmp_path, sandboxed) if f["code"] == "bypass-permissions"]


LOOPS = """\
name: g
max_hops: 4
nodes:
  - id: impl
    run: echo {{ feedback.review }}
  - id: review
    depends_on: [impl]
    run: "true"
    feedback: {rerun: impl, max: 3}
  - id: fix
    depends_on: [review]
    run: echo fix {{ feedback.lint }}
  - id: lint
    depends_on: [fix]
    run: "true"
    feedback: {rerun: fix, max: 2}
"""


def test_a_max_hops_below_the_loops_worst_case_is_named_at_its_line(tmp_path: Path) -> None:
    hit = only(findings(tmp_path, LOOPS), "max-hops-short")
    assert hit["line"] == 2
    assert (
        "max_hops 4 is below the loops' worst case of 5 round(s) (review: 3, lint: 2)"
        in (hit["message"])
    )
    raised = LOOPS.replace("max_hops: 4", "max_hops: 5")
    assert not [f for f in findings(tmp_path, raised) if f["code"] == "max-hops-short"]


def test_a_loop_whose_body_never_quotes_its_feedback_is_named(tmp_path: Path) -> None:
    unquoted = LOOPS.replace(" {{ feedback.review }}", "")
    hit = only(findings(tmp_path, unquoted), "feedback-unquoted")
    assert (hit["line"], hit["node"]) == (5, "impl")
    assert "{{ feedback.review }}" in hit["message"]


#: (prompt, the verdicts it demands); an advisory is expected when it demands one no check reads.
PROMPTS = [
    # the project's own phrasings
    ("Start your reply with SHIP IT when it is done; otherwise list what to fix.", ["SHIP IT"]),
    (
        "If it is ready to merge, reply with SHIP IT on the first line. Otherwise list each fix.",
        ["SHIP IT"],
    ),
    ("Reply with DONE on the first line, then a short summary of what you changed.", ["DONE"]),
    ("Review the diff. Start with SHIP IT, or list required fixes.", ["SHIP IT"]),
    # quoted, back-ticked, bold
    ("End your reply with `APPROVED` or `CHANGES_REQUESTED`.", ["APPROVED", "CHANGES_REQUESTED"]),
    ("Reply with `SHIP IT` or the list of problems.", ["SHIP IT"]),
    ("Begin with **LGTM** if nothing is wrong.", ["LGTM"]),
    ('Respond with "PASS" or "FAIL".', ["PASS", "FAIL"]),
    ("Answer with `yes` or `no`.", ["yes", "no"]),
    ("Reply with 'ok' once the tests pass.", ["ok"]),
    ("Say VERDICT: PASS or VERDICT: FAIL.", ["VERDICT: PASS", "VERDICT: FAIL"]),
    # bare upper case after a demand
    ("Reply APPROVED only.", ["APPROVED"]),
    ("Reply only with APPROVED, nothing else.", ["APPROVED"]),
    ("Answer PASS/FAIL, then explain.", ["PASS", "FAIL"]),
    ("Say LGTM if you would merge it.", ["LGTM"]),
    ("Respond with exactly the word DONE.", ["DONE"]),
    ("When you are finished, end with DONE.", ["DONE"]),
    ("The first line of your reply must be SHIP IT or NEEDS WORK.", ["SHIP IT", "NEEDS WORK"]),
    ("Conclude your review with APPROVED or REJECTED", ["APPROVED", "REJECTED"]),
    ("Check the build.\nIf it is green say OK\n", ["OK"]),
    ("Write README.md, then reply with DONE.", ["DONE"]),
    # no verdict: prose, formats, names, emphasis, a task that starts with a tool
    ("Write the README in Markdown. Use the API.", []),
    ("Reply with a short summary of what you changed.", []),
    ("Reply in JSON with the list of files.", []),
    ("Return a JSON object with keys path and line.", []),
    ("Start with `pytest` and fix what fails.", []),
    ("Begin with the tests under tests/unit.", []),
    ("Write the `README` file and the `CHANGELOG`.", []),
    ("Say which files changed and why.", []),
    ("Answer the question in the issue.", []),
    ("Fix the bug. Do NOT touch the API.", []),
    ("Implement it, then reply when the build is green.", []),
    ("Output the diff as a unified patch.", []),
    ("Summarise the PR in three sentences.", []),
    ("Start by reading SPEC.md, then implement it.", []),
    ("Print the test output to stdout", []),
    ("Reply with ONLY the patch, no prose.", []),
    ("Use the GitHub API and note the PR number.", []),
    ("Run make test and report which tests FAILED.", []),
    ("Your reply should be short and in English.", []),
]


@pytest.mark.parametrize(("prompt", "demanded"), PROMPTS)
def test_the_verdicts_a_prompt_demands_are_recognised_as_people_write_them(
    prompt: str, demanded: list[str]
) -> None:
    assert verdict_tokens(prompt) == demanded


@pytest.mark.parametrize(("prompt", "demanded"), PROMPTS)
def test_a_demanded_verdict_nothing_reads_is_advised_and_a_read_one_is_not(
    tmp_path: Path, prompt: str, demanded: list[str]
) -> None:
    body = "".join(f"      {line}\n" for line in prompt.splitlines())
    graph = f"name: g\nnodes:\n  - id: a\n    allowed_tools: [Read]\n    prompt: |\n{body}"
    unread = [f for f in findings(tmp_path, graph) if f["code"] == "verdict-unread"]
    assert [f["node"] for f in unread] == (["a"] if demanded else [])
    if demanded:  # the same prompt with a check reading its first verdict: quiet
        read = graph.replace(
            "    prompt: |",
            f"    success_check: {{exit_zero: true, result_matches: '^{demanded[0]}'}}\n"
            "    prompt: |",
        )
        assert not [f for f in findings(tmp_path, read) if f["code"] == "verdict-unread"]


def test_no_shipped_graph_fragment_or_template_demands_a_verdict_it_does_not_read() -> None:
    from omg.cli.lint import lint_paths

    root = Path(__file__).resolve().parents[2]
    shipped = [
        *sorted((root / "graphs").glob("*.yaml")),
        *sorted((root / "graphs" / "fragments").glob("*.yaml")),
        *sorted((root / "omg" / "templates").glob("*.yaml")),
    ]
    said = [verdict_tokens(p) for p in _prompts(shipped)]
    assert ["SHIP IT"] in said and ["DONE"] in said  # the phrasings are recognised...
    out, _ = lint_paths(shipped, "json", strict=False)
    assert not [f for f in json.loads(out) if f["code"] == "verdict-unread"]  # ...and read


def _prompts(paths: list[Path]) -> list[str]:
    import yaml

    found = []
    for path in paths:
        data = yaml.safe_load(path.read_text())
        nodes = data.get("nodes") or ([data["node"]] if "node" in data else [])
        found += [n["prompt"] for n in nodes if isinstance(n, dict) and "prompt" in n]
    return found
