"""Lint of structured replies: the schema, each field output_equals and feedback.findings
name, and each {{ outputs.NODE.FIELD }}, refused at its line with the value and the fix."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from omg.graph.load import check_file

#: A graph whose first node's output_schema is an object: its keys follow.
REVIEW = """\
name: g
nodes:
  - id: review
    prompt: p
    output_schema:
      type: object
"""
HEAD = (
    REVIEW
    + """\
      properties:
        verdict: {enum: [ship, fix]}
        findings: {type: array, items: {type: object, properties: {file: {type: string}}}}
"""
)


def _lint(tmp_path: Path, body: str) -> list[tuple[int | None, str, str]]:
    (tmp_path / "g.yaml").write_text(HEAD + body)
    _, found = check_file(tmp_path / "g.yaml")
    return [(f.line, f.code, f.as_text()) for f in found if f.severity == "error"]


@pytest.mark.parametrize(
    ("body", "line", "code", "said"),
    [
        ("    success_check: {output_equals: {verdikt: ship}}\n", 10, "output-field",
         "names the field 'verdikt', which the node's output_schema does not define"),
        ("    success_check: {output_equals: {verdict: shipit}}\n", 10, "output-equals-value",
         "'shipit' is not one of ['ship', 'fix']"),
        ("    feedback: {rerun: review, max: 1, findings: issues}\n", 10, "output-field",
         "feedback.findings names the field 'issues'"),
        ("  - {id: x, depends_on: [review], run: 'echo {{ outputs.review.nope }}'}\n", 10,
         "placeholder-output", "names the field 'nope'"),
        ("  - {id: x, run: 'echo {{ outputs.review.verdict }}'}\n", 10,
         "placeholder-not-ancestor", 'not upstream of "x"'),
        ("  - {id: x, prompt: '{{ outputs.x.verdict }}'}\n", 10, "placeholder-own-output",
         "own reply"),
        ("  - {id: x, depends_on: [review], prompt: p, success_check: {output_equals: {a: 1}}}\n",
         10, "output-equals-no-schema", "declares no output_schema"),
        ("  - {id: x, prompt: p, output_schema: {type: objekt}}\n", 10, "output-schema",
         "not a valid Draft 2020-12 schema"),
        ("  - {id: x, prompt: p, output_schema: {$defs: {x: {$ref: '#/$defs/x'}}, properties: "
         "{v: {$ref: '#/$defs/x'}}}, success_check: {output_equals: {v: 1}}}\n", 10,
         "output-schema", "leads back to itself"),  # once a traceback: the check never ended
        ("  - {id: x, prompt: p, output_schema: schemas/none.json}\n", 10, "output-schema-file",
         "no such file under the repository root"),
        ("  - {id: x, prompt: p, output_schema: ../up.json}\n", 10, "output-schema-file",
         "give a path inside the repository"),
    ],
)  # fmt: skip
def test_each_structured_key_is_checked_at_its_line(
    tmp_path: Path, body: str, line: int, code: str, said: str
) -> None:
    found = _lint(tmp_path, body)
    assert any(ln == line and c == code and said in text for ln, c, text in found), found


def test_the_fields_a_schema_defines_lint_clean(tmp_path: Path) -> None:
    body = (
        "    success_check: {exit_zero: true, output_equals: {verdict: ship, findings: []}}\n"
        "  - id: x\n"
        "    depends_on: [review]\n"
        "    run: echo {{ outputs.review.verdict }} {{ outputs.review.findings.0.file }}\n"
        '    env: {V: "{{ outputs.review.findings }}"}\n'
    )
    assert _lint(tmp_path, body) == []


REFERRING = (
    REVIEW
    + """\
      $defs:
        p: {type: object, properties: {b: {$ref: "#/$defs/q"}}}
        q: {type: integer}
      properties:
        a: {$ref: "#/$defs/p"}
        tree: {type: array, items: {$ref: "#"}}
"""
)


@pytest.mark.parametrize(
    ("equals", "said"),
    [
        ("{a: {b: x}}", 'output_equals a: {"b": "x"} can never hold'),  # was a traceback
        ("{a: {b: 3}}", None),
        ("{tree: [{}]}", None),  # "#" is the whole schema, not the field's part: it holds
        ("{tree: [3]}", "can never hold"),
    ],
)
def test_an_output_equals_value_is_checked_through_the_whole_schemas_references(
    tmp_path: Path, equals: str, said: str | None
) -> None:
    check = f"    success_check: {{output_equals: {equals}}}\n"
    (tmp_path / "g.yaml").write_text(REFERRING + check)
    _, found = check_file(tmp_path / "g.yaml")
    errors = [f.as_text() for f in found if f.severity == "error"]
    assert errors == [] if said is None else any(said in e for e in errors), errors


def test_a_schema_file_is_read_into_the_snapshot(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "r.json").write_text('{"type": "object", "required": ["verdict"]}')
    (tmp_path / "g.yaml").write_text("name: g\nnodes:\n  - {id: a, prompt: p, "
                                     "output_schema: schemas/r.json}\n")  # fmt: skip
    graph, found = check_file(tmp_path / "g.yaml")
    assert graph is not None, found
    assert graph.data["nodes"][0]["output_schema"] == {"type": "object", "required": ["verdict"]}
    assert graph.node("a").schema == {"type": "object", "required": ["verdict"]}
