"""A graph's size is checked before anything is expanded or compiled: a file past its limit is
never parsed, a graph past what a run records is refused before its patterns and commands are
judged, and a fragment splice is refused on its projected size before it is built — the same
one check for `omg lint`, `omg graph`, `omg run` and `omg run --dry-run`.
(How fast and how small each refusal is: bench/graph_size.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import omg_in_process

from omg.cli import exits
from omg.graph.limits import MAX_SNAPSHOT_BYTES
from omg.graph.lint import lint_files
from omg.graph.load import check_file


def errors(path: Path) -> list[tuple[int | None, str, str]]:
    graph, found = check_file(path)
    assert graph is None
    return [(f.line, f.code, f.message) for f in found if f.severity == "error"]


def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "graphs" / "fragments").mkdir(parents=True)
    return tmp_path


def test_a_graph_file_past_its_limit_is_refused_without_being_parsed(tmp_path: Path) -> None:
    g = tmp_path / "g.yaml"
    g.write_text(
        "name: g\nnodes:\n  - {id: a, run: 'true'}\n# " + "x" * 2 * MAX_SNAPSHOT_BYTES + "\n: ["
    )
    ((line, code, msg),) = errors(g)  # the broken YAML past the limit is never read
    assert code == "graph-too-large" and line is None
    assert f"the file holds {g.stat().st_size:,} bytes, more than the 1,048,576" in msg


#: A graph within the file limit whose JSON form is past the snapshot's, holding a pattern
#: that does not compile and a command the shell scan refuses: neither is ever looked at.
OVERSIZED = """\
name: big
nodes:
  - id: a
    run: 'echo {{{{ inputs.nope }}}}'
    success_check: {{result_matches: '({pad}'}}
"""


def test_an_oversized_graph_is_refused_before_its_patterns_and_commands_are_judged(
    tmp_path: Path,
) -> None:
    g = tmp_path / "g.yaml"
    g.write_text(OVERSIZED.format(pad="a" * (MAX_SNAPSHOT_BYTES + 10)))
    ((line, code, msg),) = errors(g)
    assert code == "graph-too-large" and line == 5
    assert "the longest value is $.nodes[0].success_check.result_matches (524,301 bytes)" in msg


@pytest.mark.parametrize(
    "command",
    [("lint",), ("graph",), ("run", "--dry-run"), ("run",)],
    ids=lambda c: " ".join(c),
)
def test_every_command_that_loads_a_graph_refuses_it_by_size_first(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    g = tmp_path / "g.yaml"
    g.write_text(OVERSIZED.format(pad="a" * (MAX_SNAPSHOT_BYTES + 10)))
    done = omg_in_process(*command, str(g), cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == (1 if command == ("lint",) else exits.REFUSED), out
    assert "bytes as JSON, more than the 524,288 a run records it in" in out
    assert "regular expression" not in out and "inputs.nope" not in out
    assert not (tmp_path / ".omg").exists()


def test_a_fragment_used_too_often_is_refused_at_the_use_that_passes_the_limit(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path)
    body = "x" * 200_000
    (root / "graphs/fragments/big.yaml").write_text(
        f"fragment: big\ndescription: d\nnode:\n  run: 'true'\n  description: {body}\n"
    )
    uses = "".join(f"  - id: n{i}\n    use: big\n" for i in range(400))
    g = root / "graphs" / "g.yaml"
    g.write_text("name: g\nnodes:\n" + uses)
    ((line, code, msg),) = errors(g)
    assert code == "graph-too-large" and line == 8  # the third use, the first past the limit
    assert 'splicing fragment "big" here would bring the graph to about 610,' in msg
    assert "refused before it was built" in msg


def test_a_binding_substituted_many_times_is_refused_before_it_is_substituted(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path)
    tools = "".join(f"    - '{{{{ with.tool }}}} {i}'\n" for i in range(300))
    (root / "graphs/fragments/many.yaml").write_text(
        "fragment: many\ndescription: d\nsubstitutions: [tool]\nnode:\n  prompt: p\n"
        "  allowed_tools:\n" + tools
    )
    g = root / "graphs" / "g.yaml"
    g.write_text(f"name: g\nnodes:\n  - id: a\n    use: many\n    with: {{tool: {'t' * 50_000}}}\n")
    ((line, code, msg),) = errors(g)
    assert code == "graph-too-large" and line == 4
    assert "would bring the graph to about 15,0" in msg  # 300 × 50,000: never built


def test_a_value_handed_to_every_node_of_a_loop_counts_once_per_node(tmp_path: Path) -> None:
    root = repo(tmp_path)
    nodes = "".join(f"  - id: s{i}\n    run: 'true'\n" for i in range(3))
    (root / "graphs/fragments/loop.yaml").write_text(
        f"fragment: loop\ndescription: d\nexit: s0\nnodes:\n{nodes}"
    )
    g = root / "graphs" / "g.yaml"
    g.write_text(f"name: g\nnodes:\n  - id: l\n    use: loop\n    cwd: {'d' * 200_000}\n")
    ((line, code, msg),) = errors(g)
    assert code == "graph-too-large" and line == 4
    assert "would bring the graph to about 600," in msg


def test_omg_lint_refuses_a_fragment_file_past_its_limit_as_a_use_would(tmp_path: Path) -> None:
    frag = tmp_path / "big.yaml"
    frag.write_text(
        f"fragment: big\ndescription: d\nnode:\n  run: 'true'\n  description: {'x' * 300_000}\n"
    )
    ((_, found),) = lint_files([frag])
    ((line, message),) = [(f.line, f.message) for f in found if f.severity == "error"]
    assert (
        line is None and "holds 300,06" in message and "more than a fragment's 262,144" in message
    )
