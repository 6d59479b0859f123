"""The README's YAML examples are what omg accepts: every graph and stub-model script in it lints
without errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omg.graph.lint import lint_files

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = [
    b for b in re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S) if "\njobs:" not in b
]


def test_the_readme_shows_a_graph_and_a_script() -> None:
    assert any("nodes:" in b for b in BLOCKS) and any(b.startswith("rules:") for b in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.splitlines()[0][:40])
def test_every_yaml_example_in_the_readme_lints_clean(block: str, tmp_path: Path) -> None:
    path = tmp_path / "example.yaml"
    path.write_text(block)
    [(_, findings)] = lint_files([path])
    errors = [f"{f.line}: {f.message}" for f in findings if f.severity == "error"]
    assert not errors, errors
