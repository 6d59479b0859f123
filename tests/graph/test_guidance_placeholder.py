"""`{{ guidance }}` is linted like the other placeholders: it takes no reference and no filter,
and stands only in a prompt, run or verify command — never a path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kit import omg_in_process, write_graph


def errors(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    path = write_graph(tmp_path, text, "g.yaml")
    done = omg_in_process("lint", "--format", "json", str(path), cwd=tmp_path)
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return [f for f in found if f["severity"] == "error"]


def test_guidance_in_a_prompt_and_a_command_is_valid(tmp_path: Path) -> None:
    graph = """\
name: g
nodes:
  - id: a
    prompt: "Do it. A person said: {{ guidance }}"
    allowed_tools: []
  - id: b
    run: echo {{ guidance }}
"""
    assert errors(tmp_path, graph) == []


def test_a_malformed_guidance_placeholder_is_named_at_its_line(tmp_path: Path) -> None:
    graph = """\
name: g
nodes:
  - id: a
    run: |
      echo start
      echo {{ guidance | inline }} {{ guidance.text }}
"""
    found = errors(tmp_path, graph)
    assert [(f["code"], f["line"]) for f in found] == [("placeholder-malformed", 6)] * 2
    assert "{{ guidance }}" in found[0]["message"]


def test_guidance_where_it_would_become_a_path_is_refused(tmp_path: Path) -> None:
    graph = """\
name: g
nodes:
  - id: a
    cwd: "{{ guidance }}"
    run: "true"
"""
    [found] = errors(tmp_path, graph)
    assert (found["code"], found["line"]) == ("placeholder-guidance", 4)
    assert "not in cwd" in found["message"]
