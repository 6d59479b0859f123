"""The YAML examples of the README and the docs pages are what omg accepts: every graph and
stub-model script in them lints without errors. And the README opens with the two commands CI
runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mdpages import README, Block, all_blocks

from omg.graph.lint import lint_files

#: The graph, fragment and stub-model script examples (workflows are checked by test_hygiene).
BLOCKS = [b for b in all_blocks("yaml") if "\njobs:" not in b.text]


def test_the_pages_show_a_graph_and_a_script() -> None:
    assert any("nodes:" in b.text for b in BLOCKS if b.page == README)
    assert any(b.text.startswith("rules:") for b in BLOCKS)


def test_the_pages_show_a_fragment_and_a_graph_using_it() -> None:
    assert "fix-and-judge" in FRAGMENTS
    assert any("use: fix-and-judge" in b.text for b in BLOCKS)


FRAGMENTS = {
    m.group(1): b.text
    for b in BLOCKS
    if (m := re.search(r"(?m)^fragment: ([\w.-]+)", b.text)) is not None
}


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.where)
def test_every_yaml_example_in_the_pages_lints_clean(block: Block, tmp_path: Path) -> None:
    text = block.text
    (tmp_path / ".git").mkdir()  # a repository root: its fragments are the pages' own
    (tmp_path / "graphs" / "fragments").mkdir(parents=True)
    for name, fragment in FRAGMENTS.items():
        (tmp_path / "graphs" / "fragments" / f"{name}.yaml").write_text(fragment)
    shown = re.match(r"# graphs/fragments/([\w.-]+\.yaml)\n", text)
    path = tmp_path / "graphs" / "fragments" / shown.group(1) if shown else tmp_path / "ex.yaml"
    path.write_text(text)
    [(_, findings)] = lint_files([path])
    errors = [f"{f.line}: {f.message}" for f in findings if f.severity == "error"]
    assert not errors, errors


SETUP = re.search(r"```sh\n(.*?)\n```", README.read_text(), re.S)


def test_the_readme_opens_with_its_two_commands() -> None:
    """Set up and run the demo, run the tests: the first block a reader meets, word for word
    (.ci/run runs the second)."""
    assert SETUP is not None
    assert SETUP.group(1) == (
        "pip install -e '.[test]' && npm ci && omg run graphs/demo.yaml   "
        "# set up, run the demo graph\n"
        "python -m pytest                                          # run the tests"
    )


def test_ci_installs_only_what_the_readmes_set_up_command_installs() -> None:
    """CI on a fresh machine is the README's two commands and nothing else: a program the suite
    needs from outside them (a Debian package, a download) fails here before it fails a user."""
    assert SETUP is not None
    readme_setup = SETUP.group(1)
    assert "pip install -e '.[test]'" in readme_setup and "npm ci" in readme_setup
    ci = (README.parent / ".ci" / "run").read_text()
    commands = [
        line.strip()
        for line in ci.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    installers = [c for c in commands if re.search(r"\b(apt|apt-get|dpkg|curl|wget|brew)\b", c)]
    assert installers == []
    installs = [c for c in commands if re.search(r"\b(pip|npm)\b.*\b(install|ci)\b", c)]
    assert [c for c in installs if "upgrade pip" not in c] == [
        "python -m pip install --quiet -e '.[test]'",
        "npm ci --no-audit --no-fund --loglevel=error",
    ]
    assert commands[-1] == "python -m pytest"
    assert "python -m pytest" in README.read_text()
