"""Lint on an agent node's project settings: opting in is a warning at its line saying what a
pull request then controls; a subagent of the checkout's without the opt-in is one too."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_lint_parity import findings


@pytest.mark.parametrize(
    ("node", "code", "line", "says"),
    [
        ("{id: a, prompt: go, allowed_tools: [], project_settings: true}", "project-settings",
         3, "on a pull request its author writes those files"),
        ("{id: a, prompt: go, runtime: codex, project_settings: true}",
         "project-settings", 3, "codex: .codex/config.toml"),
        ("{id: a, prompt: go, allowed_tools: [], agent: reviewer}", "agent-needs-project", 3,
         "agent: reviewer is looked up in the checkout's .claude/agents/"),
    ],
)  # fmt: skip
def test_an_opt_in_and_a_project_subagent_are_warned_about_at_their_line(
    tmp_path: Path, node: str, code: str, line: int, says: str
) -> None:
    found = findings(tmp_path, f"name: g\nnodes:\n  - {node}\n")
    [hit] = [f for f in found if f["code"] == code]
    assert hit["line"] == line and says in hit["message"], hit


@pytest.mark.parametrize(
    "node",
    [
        "{id: a, prompt: go, allowed_tools: []}",
        "{id: a, prompt: go, allowed_tools: [], agent: Explore}",  # built in
        "{id: a, prompt: go, allowed_tools: [], agent: reviewer, project_settings: true}",
    ],
)
def test_no_subagent_warning_when_claude_can_find_it(tmp_path: Path, node: str) -> None:
    found = findings(tmp_path, f"name: g\nnodes:\n  - {node}\n")
    assert not [f for f in found if f["code"] == "agent-needs-project"]
