"""Run ids: the one rule, as a table; and the ids omg makes itself always keep it."""

from __future__ import annotations

import pytest

from omg.errors import UsageError
from omg.state.runid import MAX_RUN_ID, check_run_id, is_run_id, slug

VALID = [
    "r",
    "good",
    "20261204-030000-review",
    "20261204-030000-review-2",
    "pr-12-review-abc1234",
    "A_b-c.d",
    "9",
    "x" * MAX_RUN_ID,
]
INVALID = [
    "",
    ".",
    "..",
    "../x",
    "x/..",
    "a/b",
    "/abs/path",
    "x\n",
    "\nx",
    "x\0y",
    "x\r",
    "x y",
    " x",
    "-x",
    "_x",
    ".hidden",
    "a..b",
    "x.",
    "x.lock",
    "ünï",
    "run-é",
    "\u202erun",
    "x" * (MAX_RUN_ID + 1),
    "a\\b",
    "x@{1}",
    "x~1",
    "x:y",
    "*",
]


@pytest.mark.parametrize("value", VALID)
def test_a_run_id_is_accepted(value: str) -> None:
    assert is_run_id(value) and check_run_id(value) == value


@pytest.mark.parametrize("value", INVALID, ids=ascii)
def test_anything_else_is_refused_as_a_usage_error(value: str) -> None:
    assert not is_run_id(value)
    with pytest.raises(UsageError, match="is not a run id") as refused:
        check_run_id(value)
    assert "\n" not in str(refused.value) and "\0" not in str(refused.value)


@pytest.mark.parametrize(
    ("text", "room", "made"),
    [
        ("review", 50, "review"),
        ("my graph", 50, "my-graph"),
        ("a..b...c", 50, "a.b.c"),
        ("x.lock", 50, "x-lock"),
        ("name.", 50, "name"),
        ("...", 50, "run"),
        ("ünï", 50, "-n-"),
        ("a/b\n", 50, "a-b-"),
        ("abcdefgh", 3, "abc"),
        ("ab.lock.", 50, "ab-lock"),
    ],
)
def test_slug_makes_run_id_characters_within_room(text: str, room: int, made: str) -> None:
    assert slug(text, room) == made
    assert is_run_id(f"x-{made}")
