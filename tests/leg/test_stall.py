"""The no-progress rule, exactly as DESIGN.md states it."""

from __future__ import annotations

import pytest

from omg.leg.stall import normalized, stalled


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("**Finding:** the README is missing", "- finding:   The readme IS missing "),
        ("## Fix `hello.sh`\n> it prints *hello*", "fix hello.sh it prints hello"),
        ("1. add a test\n2) run it", "add a test\nrun it"),
        ("| a | b |", "a b"),
    ],
)
def test_decoration_case_and_whitespace_do_not_make_findings_differ(a: str, b: str) -> None:
    assert normalized(a) == normalized(b)
    assert stalled(a, b, None, {}) != ""


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("pass 1 is not good enough", "pass 2 is not good enough"),
        ("add a test", "add a test, and document it"),
        ("x-y", "xy"),  # a hyphen inside words is text, not decoration
    ],
)
def test_different_words_are_progress(a: str, b: str) -> None:
    assert stalled(a, b, None, {}) == ""


def test_empty_findings_never_count_as_a_repeat() -> None:
    assert stalled("**", "", None, {}) == ""
    assert stalled(None, "anything", None, {}) == ""  # no round before to compare with


def test_lanes_at_the_same_tree_are_no_progress_and_both_reasons_are_named() -> None:
    trees = {"lane": "4b825dc6"}
    assert "left its lane (lane) exactly" in stalled("a", "b", trees, dict(trees))
    both = stalled("same", "SAME", trees, dict(trees))
    assert "left its lane" in both and "findings repeat" in both
    assert stalled("a", "b", trees, {"lane": "9f2e"}) == ""
    assert stalled("a", "b", {}, {}) == ""  # no lanes: only the findings decide


@pytest.mark.parametrize(
    ("a", "b", "repeats"),
    [
        # structured findings: the same set, in another order, is no progress
        ('[{"file": "a.py", "problem": "x"}, {"file": "b.py", "problem": "y"}]',
         '[{"problem": "y", "file": "b.py"}, {"file": "a.py", "problem": "x"}]', True),
        # one finding fixed, one left: progress, though most of the text is the same
        ('[{"file": "a.py", "problem": "x"}, {"file": "b.py", "problem": "y"}]',
         '[{"file": "b.py", "problem": "y"}]', False),
        # a different verify output around the same findings changes nothing
        ('[{"file": "a.py"}]\n\n--- omg: verify evidence ---\nexit code: 1 (expected 0)',
         '[{"file": "a.py"}]\n\n--- omg: verify evidence ---\nexit code: 2 (expected 0)', True),
    ],
)  # fmt: skip
def test_structured_findings_repeat_as_a_set_of_data(a: str, b: str, repeats: bool) -> None:
    assert ("findings repeat" in stalled(a, b, None, {})) == repeats
