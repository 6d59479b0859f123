"""Lint parity: a verdict no check reads, an unanchored result_matches, bypassPermissions, a
max_hops below the loops' worst case, a loop that never quotes its feedback — each a warning
at the file and line to fix, saying how."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kit import omg_in_process, write_graph

from omg.graph.parity import verdict_tokens


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
    assert "max_hops 4 is below the loops' worst case of 5 round(s) (review: 3, lint: 2)" in (
        hit["message"]
    )
    raised = LOOPS.replace("max_hops: 4", "max_hops: 5")
    assert not [f for f in findings(tmp_path, raised) if f["code"] == "max-hops-short"]


def test_a_loop_whose_body_never_quotes_its_feedback_is_named(tmp_path: Path) -> None:
    unquoted = LOOPS.replace(" {{ feedback.review }}", "")
    hit = only(findings(tmp_path, unquoted), "feedback-unquoted")
    assert (hit["line"], hit["node"]) == (5, "impl")
    assert "{{ feedback.review }}" in hit["message"]
