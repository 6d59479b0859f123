"""yamlpos: YAML to plain data with the line and column of every key, never a traceback."""

from __future__ import annotations

import time

from omg.graph.positions import json_path
from omg.graph.yamlpos import parse

TEXT = """\
name: demo
nodes:
  - id: a
    prompt: |
      first line
      {{ inputs.x }}
    retry: {max: 1, on: [timeout]}
  - id: b
"""


def test_yamlpos_records_the_line_and_column_of_keys_and_items() -> None:
    parsed = parse(TEXT)
    assert not parsed.problems
    at = parsed.positions.at
    assert at(("name",)) == (1, 1)
    assert at(("nodes", 0)) == (3, 5)
    assert at(("nodes", 0, "retry", "on", 0)) == (7, 26)
    assert at(("nodes", 1, "id")) == (8, 5)
    assert at(("nodes", 0, "retry", "nope")) == (7, 5), "falls back to the nearest ancestor"


def test_yamlpos_maps_an_offset_in_a_literal_block_to_its_line() -> None:
    parsed = parse(TEXT)
    prompt = parsed.data["nodes"][0]["prompt"]
    assert parsed.positions.line_in(("nodes", 0, "prompt"), prompt.index("{{"), prompt) == 6


def test_yamlpos_keeps_keys_as_written_so_on_is_not_true() -> None:
    data = parse("retry: {on: [timeout], yes: 1, 1: x}\nflag: yes\n").data
    assert data == {"retry": {"on": ["timeout"], "yes": 1, "1": "x"}, "flag": True}


def test_yamlpos_reports_every_duplicate_key_and_keeps_parsing() -> None:
    parsed = parse("a: 1\nb: 2\na: 3\nc:\n  d: 1\n  d: 2\n")
    assert [(p.code, p.line) for p in parsed.problems] == [
        ("duplicate-key", 3),
        ("duplicate-key", 6),
    ]
    assert 'duplicate key "a" (first at line 1)' in parsed.problems[0].message
    assert parsed.data == {"a": 3, "b": 2, "c": {"d": 2}}


def test_yamlpos_turns_a_syntax_error_into_a_located_problem() -> None:
    parsed = parse("name: x\nnodes: [a, b\n")
    assert parsed.data is None
    (problem,) = parsed.problems
    assert problem.code == "yaml-syntax" and problem.line is not None
    assert problem.message.startswith("not valid YAML:")


def test_yamlpos_merge_keys_fill_in_and_written_keys_win() -> None:
    parsed = parse("base: &b {run: make, timeout: 5m}\nnode:\n  <<: *b\n  run: make test\n")
    assert parsed.data["node"] == {"run": "make test", "timeout": "5m"}
    assert parsed.positions.at(("node", "run")) == (4, 3)
    assert not parsed.problems


def test_yamlpos_refuses_structures_that_would_not_terminate() -> None:
    assert parse("a: &a [*a]\n").problems[0].code == "yaml-size"
    # PyYAML ≥ 6.0.4 has its own nesting limit and reports it as a syntax error; older
    # releases recurse until omg stops them. Either way: a located refusal, no traceback.
    deep = parse("[" * 3000 + "]" * 3000).problems[0]
    assert deep.code in ("yaml-size", "yaml-syntax") and "nest" in deep.message
    bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n"
        for p, c in zip("abcdef", "bcdefg", strict=True)
    )
    started = time.perf_counter()
    assert parse(bomb).problems[0].code == "yaml-size"
    assert time.perf_counter() - started < 5


def test_yamlpos_refuses_tags_the_safe_loader_does_not_know() -> None:
    (problem,) = parse("a: !!python/object:os.system x\n").problems
    assert problem.code == "yaml-syntax" and problem.line == 1


def test_yamlpos_json_path_spells_indices_and_keys() -> None:
    assert json_path(("nodes", 2, "retry")) == "$.nodes[2].retry"
    assert json_path(()) == "$"


def test_yamlpos_places_a_control_character_on_its_line() -> None:
    (problem,) = parse("name: a\nnodes:\n  - id: a\n    run: 'x\x01'\n").problems
    assert problem.code == "yaml-syntax" and (problem.line, problem.column) == (4, 12)
    assert "control characters are not allowed (character #x0001)" in problem.message


def test_yamlpos_places_nesting_past_the_limit_on_its_line() -> None:
    text = "name: a\nx: " + "{a: " * 150 + "1" + "}" * 150 + "\n"
    (problem,) = parse(text).problems
    assert problem.code == "yaml-size" and problem.line == 2
    assert "nested more than 100 levels deep" in problem.message
    block = "name: a\nnodes:\n" + "".join(" " * i + "a:\n" for i in range(2, 400))
    (problem,) = parse(block).problems
    assert problem.line is not None and "nest" in problem.message


def test_yamlpos_places_a_scalar_python_cannot_read_on_its_line() -> None:
    for text in ("a: 1\nb: 2001-13-45\n", "a: 1\nb: " + "9" * 5000 + "\n"):
        (problem,) = parse(text).problems
        assert problem.code == "yaml-syntax" and problem.line == 2, problem
        assert "quote it" in problem.message
