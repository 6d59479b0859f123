"""`omg lint` checks stub-model scripts against their own schema, at the line of the fault;
the same findings refuse the script when a rehearsal loads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from omg.errors import GraphError
from omg.graph.lint import is_script, lint_files
from omg.stubmodel import load

BAD = "rules:\n  - name: x\n    turns:\n      - tool: Write\n"


def test_a_script_is_told_from_a_graph_by_its_top_level_keys() -> None:
    assert is_script("description: d\nrules:\n  - name: x\n    reply: hi\n")
    assert not is_script("name: g\nnodes:\n  - {id: a, run: 'true'}\n")
    assert not is_script("name: g\nnodes: []\nrules: []\n")


def test_a_bad_script_is_one_finding_at_its_line_in_lint_and_in_load(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(BAD)
    [(_, findings)] = lint_files([path])
    assert [(f.line, f.code) for f in findings] == [(4, "stub-model-schema")]
    assert findings[0].message.startswith("rules[0].turns[0]: ")
    with pytest.raises(GraphError, match=r"s\.yaml:4: rules\[0\]\.turns\[0\]: "):
        load(path)


def test_a_script_that_is_not_yaml_is_a_yaml_finding(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("rules:\n  - name: [unclosed\n")
    [(_, findings)] = lint_files([path])
    assert findings and findings[0].code == "yaml" and "fix the YAML" in findings[0].message
