"""The walk over a fragment's parsed data (``omg.graph.fragments.walk``), a pure leaf: every
string with its path, and every id or reference carrying a '/' — table tests."""

from __future__ import annotations

from typing import Any

import pytest

from omg.graph.fragments.walk import slashes, strings


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("x", [((), "x")]),
        (3, []),
        (None, []),
        (["a", 1, ["b"]], [((0,), "a"), ((2, 0), "b")]),
        ({"k": "v", "n": {"m": ["w"]}}, [(("k",), "v"), (("n", "m", 0), "w")]),
    ],
)
def test_strings_are_every_text_with_its_path(value: Any, want: list[Any]) -> None:
    assert strings(value, ()) == want


@pytest.mark.parametrize(
    ("nodes", "want"),
    [
        (None, []),
        ({"id": "a/b"}, []),  # not a list of nodes
        ([{"id": "plain", "run": "true"}], []),
        ([{"id": "a/b"}], [(("nodes", 0, "id"), "id", "a/b")]),
        ([1, {"depends_on": ["x", "y/z"]}], [(("nodes", 1, "depends_on", 1), "depends_on", "y/z")]),
        (
            [{"id": "n", "feedback": {"rerun": "loop/fix"}}],
            [(("nodes", 0, "feedback", "rerun"), "feedback.rerun", "loop/fix")],
        ),
        (
            [{"id": "n", "prompt": "read {{ artifacts.l/plan }} and {{ inputs.a/b }}"}],
            [(("nodes", 0, "prompt"), "a placeholder", "{{ artifacts.l/plan }}")],
        ),
    ],
)
def test_slashes_finds_every_name_only_a_splice_may_mint(nodes: Any, want: list[Any]) -> None:
    assert slashes(nodes, ("nodes",)) == want
