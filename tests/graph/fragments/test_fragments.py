"""Fragments as test cases: tests/graph/fragments/cases/{invalid,valid}/<case>/ is a repository
holding graph.yaml and its graphs/fragments/; every refused case names the file:line to fix.

Headers (YAML comments at the top of graph.yaml):
  # expect: <text>              invalid: some error's message contains it
  # expect-at: <file>:<line>    invalid: that error is at that file (relative to the case) and line
  # expect-via: <text>          invalid: that error's citation chain (``use:`` lines) is exactly it
  # expect-ids: a, l/b          valid: the resolved graph's node ids, in order
  # expect-value: <id> <key> <json>   valid: a resolved node's key holds that value
  # expect-info: <text>         valid: some disclosure (info) line contains it
  # expect-warning-at: <file>:<line>  valid: some warning is there
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from kit import headers

from omg.graph.findings import Finding
from omg.graph.lint import lint_files
from omg.graph.load import check_file

CASES = Path(__file__).parent / "cases"
INVALID = sorted(p for p in (CASES / "invalid").iterdir() if p.is_dir())
VALID = sorted(p for p in (CASES / "valid").iterdir() if p.is_dir())
GRAPHS = Path(__file__).resolve().parents[3] / "graphs"


def checkout(case: Path, tmp_path: Path) -> Path:
    """The case copied into a repository of its own (fragments resolve from its root)."""
    repo = tmp_path / case.name
    shutil.copytree(case, repo)
    (repo / ".git").mkdir()
    return repo


def _show(found: list[Finding]) -> str:
    return "\n".join(f"{f.file}:{f.line}: {f.severity}: {f.message} [via {f.via}]" for f in found)


def test_every_rule_has_cases() -> None:
    assert len(INVALID) >= 25 and len(VALID) >= 7


@pytest.mark.parametrize("case", INVALID, ids=lambda p: p.name)
def test_a_refused_fragment_use_names_the_file_and_line_to_fix(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(case, tmp_path)
    monkeypatch.chdir(repo)
    graph_file = repo / "graph.yaml"
    (expected,) = headers(graph_file, "expect")
    graph, found = check_file(Path("graph.yaml"))
    errors = [f for f in found if f.severity == "error"]
    assert graph is None and errors
    hits = [f for f in errors if expected in f.message]
    assert hits, f"no error says {expected!r}:\n" + _show(errors)
    for at in headers(graph_file, "expect-at"):
        file, line = at.rsplit(":", 1)
        assert any(f.file == file and f.line == int(line) for f in hits), _show(hits)
    for via in headers(graph_file, "expect-via"):
        assert any(f.via == via for f in hits), _show(hits)


@pytest.mark.parametrize("case", VALID, ids=lambda p: p.name)
def test_a_fragment_use_resolves_to_the_graph_it_promises(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(case, tmp_path)
    monkeypatch.chdir(repo)
    graph_file = repo / "graph.yaml"
    graph, found = check_file(Path("graph.yaml"))
    assert graph is not None, _show(found)
    (ids,) = headers(graph_file, "expect-ids")
    assert list(graph.ids) == [i.strip() for i in ids.split(",")]
    nodes = {n["id"]: n for n in graph.data["nodes"]}
    for spec in headers(graph_file, "expect-value"):
        nid, key, value = spec.split(" ", 2)
        assert nodes[nid].get(key, "<absent>") == json.loads(value), (nid, key, nodes[nid])
    infos = [f.message for f in found if f.severity == "info"]
    for text in headers(graph_file, "expect-info"):
        assert any(text in m for m in infos), infos
    for at in headers(graph_file, "expect-warning-at"):
        file, line = at.rsplit(":", 1)
        warned = [f for f in found if f.severity == "warning"]
        assert any(f.file == file and f.line == int(line) for f in warned), _show(warned)


def test_a_fragment_name_may_not_be_a_link_out_of_the_fragments_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "graphs" / "fragments").mkdir(parents=True)
    outside = tmp_path / "secret.yaml"
    outside.write_text("fragment: evil\ndescription: d\nnode:\n  run: echo\n")
    (tmp_path / "graphs" / "fragments" / "evil.yaml").symlink_to(outside)
    (tmp_path / "g.yaml").write_text("name: g\nnodes:\n  - id: a\n    use: evil\n")
    monkeypatch.chdir(tmp_path)
    graph, found = check_file(Path("g.yaml"))
    assert graph is None
    assert [(f.file, f.line) for f in found if "link leading out" in f.message] == [("g.yaml", 4)]


def test_fragments_resolve_from_the_repository_not_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = checkout(VALID[0], tmp_path)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "graphs" / "fragments").mkdir(parents=True)  # a decoy beside the cwd
    monkeypatch.chdir(elsewhere)
    graph, found = check_file(repo / "graph.yaml")
    assert graph is not None, _show(found)


def test_omg_lint_checks_a_fragment_file_on_its_own(tmp_path: Path) -> None:
    bad = tmp_path / "graphs" / "fragments" / "loop.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "fragment: loop\ndescription: d\nsubstitutions: [a, b]\nexit: x\nnodes:\n"
        "  - id: x\n    prompt: '{{ with.a }}'\n    feedback: {rerun: y, max: 1}\n"
    )
    ((_, found),) = lint_files([bad])
    got = {(f.severity, f.line, f.code) for f in found}
    assert ("error", 8, "fragment-feedback") in got
    assert ("warning", 3, "with-unused") in got
    shipped = lint_files([GRAPHS / "fragments"])
    assert all(not [f for f in fs if f.severity == "error"] for _, fs in shipped), shipped


@pytest.mark.parametrize("name", ["review-loop", "demo"])
def test_the_shipped_graphs_resolve_to_their_golden_graph(name: str) -> None:
    graph, found = check_file(GRAPHS / f"{name}.yaml")
    assert graph is not None, _show(found)
    golden = CASES / "golden" / f"{name}.json"
    resolved = json.dumps(graph.data, indent=2, ensure_ascii=False) + "\n"
    assert resolved == golden.read_text(encoding="utf-8"), (
        f"{name}.yaml now resolves differently; if that is intended, rewrite {golden}"
    )


def test_lint_run_and_dry_run_disclose_each_use_and_github_annotates_the_fragment(
    tmp_path: Path,
) -> None:
    from kit import omg_in_process

    repo = checkout(CASES / "valid" / "multi_splice_wires_entry_exit_and_lane", tmp_path)
    line = 'fragment: node "l" uses loop (graphs/fragments/loop.yaml) — write then judge'
    lint = omg_in_process("lint", "graph.yaml", cwd=repo)
    assert lint.returncode == 0 and line in lint.stdout, lint.stdout + lint.stderr
    dry = omg_in_process("run", "graph.yaml", "--dry-run", cwd=repo)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert dry.stdout.count(line) == 1 and "- l/judge [agent]" in dry.stdout
    bad = checkout(CASES / "invalid" / "graph_rule_inside_fragment", tmp_path)
    gh = omg_in_process("lint", "--format", "github", "graph.yaml", cwd=bad)
    assert gh.returncode == 1
    assert "::error file=graphs/fragments/slow.yaml,line=5," in gh.stdout, gh.stdout
    assert "(spliced via graph.yaml:7 use: slow)" in gh.stdout


def test_omg_graph_draws_a_spliced_loop_as_a_subgraph(tmp_path: Path) -> None:
    from omg.graph.mermaid import render_mermaid

    repo = checkout(CASES / "valid" / "loop_inside_a_loop", tmp_path)
    graph, found = check_file(repo / "graph.yaml")
    assert graph is not None, _show(found)
    text = render_mermaid(graph, {"outer/pre": "passed"})
    assert 'subgraph s0["outer"]' in text and 'subgraph s1["outer/inner"]' in text
    outer = text.index('subgraph s0["outer"]')
    inner = text.index('subgraph s1["outer/inner"]')
    assert outer < inner < text.index("end", inner)
    assert text.count("\n  end") + text.count("\n    end") == 2


def test_a_fragments_directory_may_not_be_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    outside.mkdir()
    (outside / "evil.yaml").write_text("fragment: evil\ndescription: d\nnode:\n  run: echo\n")
    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "fragments").symlink_to(outside, target_is_directory=True)
    (tmp_path / "g.yaml").write_text("name: g\nnodes:\n  - id: a\n    use: evil\n")
    monkeypatch.chdir(tmp_path)
    graph, found = check_file(Path("g.yaml"))
    assert graph is None
    said = [(f.file, f.line) for f in found if "reached through a symbolic link" in f.message]
    assert said == [("g.yaml", 4)], _show(found)


BODY = """\
fragment: body
description: d
substitutions: [rounds, wait]
node:
  run: echo hi
  timeout: forever_and_ever
  colour: blue
  idle_timeout: "{{ with.wait }}"
  retry: {max: "{{ with.rounds }}", on: [nonzero_exit]}
"""


def test_omg_lint_checks_a_fragment_body_as_a_graph_using_it_would(tmp_path: Path) -> None:
    """Lint on the fragment file finds what a graph using it is refused for, at the same
    lines; a value a binding has yet to give is left to the splice."""
    (tmp_path / ".git").mkdir()
    frag = tmp_path / "graphs" / "fragments" / "body.yaml"
    frag.parent.mkdir(parents=True)
    frag.write_text(BODY)
    ((_, alone),) = lint_files([frag])
    assert {(f.line, f.code) for f in alone if f.severity == "error"} == {(7, "unknown-key")}
    frag.write_text(BODY.replace("  colour: blue\n", ""))
    ((_, alone),) = lint_files([frag])
    assert [(f.line, f.code, f.path) for f in alone if f.severity == "error"] == [
        (6, "bad-value", "$.node.timeout")
    ]
    g = tmp_path / "g.yaml"
    g.write_text("name: g\nnodes:\n  - id: a\n    use: body\n    with: {rounds: 2, wait: 1m}\n")
    ((_, used),) = lint_files([g])
    errors = [f for f in used if f.severity == "error"]
    assert [(f.line, f.message) for f in errors] == [
        (f.line, f.message) for f in alone if f.severity == "error"
    ]


def test_a_typed_value_awaiting_its_binding_leaves_the_rest_of_the_body_judged(
    tmp_path: Path,
) -> None:
    frag = tmp_path / "f.yaml"
    frag.write_text(
        "fragment: f\ndescription: d\nsubstitutions: [rounds, wait]\nnode:\n  run: 'true'\n"
        "  retry: {max: '{{ with.rounds }}', on: [nonzero_exit]}\n  timeout: '{{ with.wait }}'\n"
        "  success_check: {result_matches: '(open'}\n"
    )
    ((_, found),) = lint_files([frag])
    assert [(f.line, f.code) for f in found if f.severity == "error"] == [(8, "bad-regex")]


def test_omg_lint_checks_each_node_of_a_loop_fragment_by_its_own_rules(tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.write_text(
        "fragment: loop\ndescription: d\nexit: b\nnodes:\n"
        "  - id: a\n    run: 'true'\n    success_check: {result_matches: '(open'}\n"
        "  - id: b\n    depends_on: [a]\n    prompt: p\n    timeout: 200h\n"
        "  - id: c\n    depends_on: [b]\n    use: elsewhere\n    timeout: never\n"
    )
    ((_, found),) = lint_files([loop])
    got = [(f.line, f.code, f.node) for f in found if f.severity == "error"]
    assert got == [(7, "bad-regex", "a"), (11, "bad-duration", "b")]  # c: judged with its own


def test_an_unknown_fragment_key_is_reported_at_its_own_line(tmp_path: Path) -> None:
    frag = tmp_path / "f.yaml"
    frag.write_text("fragment: f\ndescription: d\n\nnode:\n  run: 'true'\ncolour: blue\n")
    ((_, found),) = lint_files([frag])
    ((line, code, message),) = [(f.line, f.code, f.message) for f in found]
    assert (line, code) == (6, "unknown-key")
    assert message.startswith('unknown key "colour" in the fragment — allowed keys: fragment')


def test_an_unknown_key_in_a_fragment_node_is_refused_with_the_keys_it_may_hold(
    tmp_path: Path,
) -> None:
    frag = tmp_path / "f.yaml"
    frag.write_text(
        "fragment: f\ndescription: d\nexit: a\nnodes:\n  - id: a\n    run: 'true'\n    timeot: 5m\n"
    )
    ((_, found),) = lint_files([frag])
    ((line, message),) = [(f.line, f.message) for f in found]
    assert line == 7
    assert message.startswith('unknown key "timeot" in nodes[0] — did you mean "timeout"?')


def test_a_bound_value_reaches_a_command_through_env_as_data(tmp_path: Path) -> None:
    """The documented pattern: `{{ with.x }}` bound to `{{ inputs.x }}` in `env:`, read as
    "$NAME": the node gets the input's value, hostile text and all, never the placeholder."""
    from kit import run_graph

    fragments = tmp_path / "graphs" / "fragments"
    fragments.mkdir(parents=True)
    (fragments / "say-goal.yaml").write_text(
        "fragment: say-goal\ndescription: says the goal back\nsubstitutions: [goal]\n"
        'node:\n  run: printf \'%s\' "$GOAL"\n  env: {GOAL: "{{ with.goal }}"}\n'
    )
    graph = (
        "name: g\ninputs: {goal: {required: true}}\nnodes:\n  - id: say\n    use: say-goal\n"
        '    with: {goal: "{{ inputs.goal }}"}\n'
    )
    hostile = "tidy $(touch pwned) `touch pwned` ' \" ; {{ inputs.goal }}"
    ran = run_graph(tmp_path, graph, inputs={"goal": hostile})
    assert ran.outcome == "passed", ran.error
    assert ran.artifact("say") == hostile
    assert not (tmp_path / "pwned").exists()
