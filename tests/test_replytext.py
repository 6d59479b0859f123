"""A structured reply's text read, pure: the JSON a reply holds (or why it holds none), and
findings compared as a set."""

from __future__ import annotations

from typing import Any

import pytest

from omg import replytext as rt


@pytest.mark.parametrize(
    ("text", "value", "bad"),
    [
        ('{"a": 1}', {"a": 1}, False),
        ('```json\n{"a": 1}\n```', {"a": 1}, False),
        ("I'd SHIP IT once the tests pass", None, True),
        ('{"a": NaN}', None, True),
    ],
)
def test_a_reply_is_json_or_says_why_not(text: str, value: Any, bad: bool) -> None:
    got, why = rt.parse_reply(text)
    assert (got, bool(why)) == (value, bad)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ('[{"f": "a.py", "p": "Bug"}, {"f": "b.py"}]',
         '[{"f": "b.py"}, {"p": "bug ", "f": "a.py"}]', True),
        ('[{"f": "a.py"}]', '[{"f": "a.py"}, {"f": "b.py"}]', False),
        ('[{"f": "a.py"}]', '[{"f": "a.py"}]\n\n--- omg: verify evidence ---\nexit 1', True),
    ],
)  # fmt: skip
def test_findings_compare_as_a_set_whatever_their_order_and_evidence(
    a: str, b: str, same: bool
) -> None:
    assert (rt.finding_set(a) == rt.finding_set(b)) == same
    assert rt.finding_set("- prose finding") is None
