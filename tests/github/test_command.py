"""`/omg` comment commands, from a table of lines (commands.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from omg.github.command import Command, Malformed, parse

CASES: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "commands.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[repr(c["text"])[:40] for c in CASES])
def test_a_comment_line_parses_to_what_the_table_says(case: dict[str, Any]) -> None:
    got = parse(case["text"])
    if case.get("none"):
        assert got is None
    elif "malformed" in case:
        assert isinstance(got, Malformed) and case["malformed"] in got.problem
        # the reply teaches the syntax: the command's own, or the list of all
        assert "/omg approve <gate>" in got.problem or "approve-spend <amount>" in got.problem
    else:
        assert isinstance(got, Command)
        want = {"gate": "", "ref": "", "reason": "", **case["command"]}
        assert (got.verb, got.gate, got.ref, got.reason) == (
            want["verb"],
            want["gate"],
            want["ref"],
            want["reason"],
        )
        assert got.text == case["text"].strip().splitlines()[0].strip()
        assert got.amount == want.get("amount", 0.0)
