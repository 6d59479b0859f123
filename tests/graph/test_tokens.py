"""The placeholder grammar (``omg.graph.tokens``), a pure leaf: where its tokens stand in a
text, what a malformed one is, and a refused spot told about its token — table tests."""

from __future__ import annotations

import pytest

from omg.graph.shell.lexer import Spot
from omg.graph.tokens import Token, refusal, render, scan, spans


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("", []),
        ("no placeholder {{ here", []),
        ("{{ inputs.x }}", [(0, 14)]),
        ("a {{inputs.x}} b {{ artifacts.plan | inline }}", [(2, 14), (17, 46)]),
        ("{{ guidance }} and {{ outputs.review.verdict }}", [(0, 14), (19, 47)]),
        ("{{ input.x }} {{ inputs. }} {{ outputs }}", []),  # malformed: no span
        ("{{ inputs.a/b/c/d/e }}", []),  # five parts: more than a reference may have
    ],
)
def test_spans_are_the_well_formed_tokens_alone(text: str, want: list[tuple[int, int]]) -> None:
    assert spans(text) == want
    assert all(text[a:b].startswith("{{") and text[a:b].endswith("}}") for a, b in want)


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("{{ inputs.x }} {{ guidance }}", ["inputs", "guidance"]),
        ("{{ Input.x }}", [None]),  # meant as a placeholder, not well formed
        ("{{ guidance | inline }}", [None]),  # guidance takes no filter
        ("{{ mustache }} {{ other.thing }}", []),  # not a placeholder kind: literal text
    ],
)
def test_scan_returns_well_formed_and_malformed_tokens(text: str, kinds: list[str | None]) -> None:
    assert [t.kind for t in scan(text)] == kinds


def test_render_substitutes_each_well_formed_token_once() -> None:
    seen: list[str] = []

    def resolve(tok: Token) -> str:
        seen.append(tok.ref)
        return "<" + tok.ref + ">"

    assert render("a {{ inputs.x }} {{ inputs. }} {{ artifacts.y }}", resolve) == (
        "a <x> {{ inputs. }} <y>"
    )
    assert seen == ["x", "y"]


def test_a_refused_spot_is_told_about_its_token() -> None:
    spot = Spot(0, 14, "word", "stands where sh runs code: write {tok} as data")
    assert refusal(spot, "{{ inputs.x }}") == (
        "{{ inputs.x }} stands where sh runs code: write {{ inputs.x }} as data"
    )
