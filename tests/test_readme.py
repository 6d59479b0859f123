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


def test_the_readme_shows_a_fragment_and_a_graph_using_it() -> None:
    assert "fix-and-judge" in FRAGMENTS
    assert any("use: fix-and-judge" in b for b in BLOCKS)


FRAGMENTS = {
    m.group(1): b for b in BLOCKS if (m := re.search(r"(?m)^fragment: ([\w.-]+)", b)) is not None
}


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.splitlines()[0][:40])
def test_every_yaml_example_in_the_readme_lints_clean(block: str, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # a repository root: its fragments are the README's own
    (tmp_path / "graphs" / "fragments").mkdir(parents=True)
    for name, text in FRAGMENTS.items():
        (tmp_path / "graphs" / "fragments" / f"{name}.yaml").write_text(text)
    shown = re.match(r"# graphs/fragments/([\w.-]+\.yaml)\n", block)
    path = tmp_path / "graphs" / "fragments" / shown.group(1) if shown else tmp_path / "ex.yaml"
    path.write_text(block)
    [(_, findings)] = lint_files([path])
    errors = [f"{f.line}: {f.message}" for f in findings if f.severity == "error"]
    assert not errors, errors
