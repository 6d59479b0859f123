"""The reply check (omg.runners.replycheck): a reply validated in a real child process under a
time limit, so no schema and no reply can hold a leg."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omg.runners.process import spawn
from omg.runners.replycheck import check_reply

BACKTRACKS = {"type": "string", "pattern": "^([a-z]+\\s?)+$"}


def test_a_pattern_that_backtracks_on_a_reply_is_stopped_at_the_time_limit(
    tmp_path: Path,
) -> None:
    got = check_reply(BACKTRACKS, "a" * 40 + "!", spawn, tmp_path, timeout_s=1)
    assert got.unusable == "the check did not finish within 1s" and got.errors == ()


@pytest.mark.parametrize(
    ("schema", "value", "errors"),
    [
        (BACKTRACKS, "fine words", ()),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 3, ()),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, [], ("$: [] is not valid under "
                                                                     "any of the given schemas",)),
        ({"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
         {"a": "x"}, ("$.a: 'x' is not of type 'integer'",)),
    ],
)  # fmt: skip
def test_a_reply_is_checked_as_the_leg_would_check_it(
    tmp_path: Path, schema: Any, value: Any, errors: tuple[str, ...]
) -> None:
    got = check_reply(schema, value, spawn, tmp_path)
    assert (got.errors, got.unusable) == (errors, "")


@pytest.mark.parametrize(
    ("schema", "value", "said"),
    [
        ({"type": "array", "items": {"$ref": "#"}}, [], "nests too deeply"),
        ({"properties": {"a": {"$ref": "#/$defs/gone"}}}, {"a": 1}, "PointerToNowhere"),
    ],
)
def test_a_schema_that_cannot_be_applied_says_why_and_is_no_error_of_the_reply(
    tmp_path: Path, schema: Any, value: Any, said: str
) -> None:
    if value == []:
        for _ in range(600):  # JSON omg reads; a check of it recurses past Python's limit
            value = [value]
    got = check_reply(schema, value, spawn, tmp_path)
    assert said in got.unusable and got.errors == ()


def test_a_package_planted_in_the_workspace_is_not_what_the_child_imports(tmp_path: Path) -> None:
    for name in ("json", "omg", "jsonschema"):  # a node writes its workspace, the child's cwd
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("raise SystemExit('planted code ran')\n")
    got = check_reply(BACKTRACKS, "fine words", spawn, tmp_path)
    assert (got.errors, got.unusable) == ((), "")
