"""Inert Markdown, rendered by cmark-gfm: any text in a code span, a table cell or a fenced
block renders as exactly that text and no element of its own; links, mentions and markers."""

from __future__ import annotations

import pytest
from gfm import HOSTILE, read

from omg.github.markdown import (
    BREAK_MARK,
    MARKER_NAME,
    cell,
    code,
    fence,
    link,
    marker_value,
    mention,
    one_line,
)

CONTEXTS = """\
### heading {code}

say {code} then more

> {code}

- {code}

| head | other |
|---|---|
| {cell} | tail |
"""
#: What CONTEXTS renders to when the text is harmless: one code element in each place.
ELEMENTS = [
    *("h3", "code", "p", "code", "blockquote", "p", "code", "ul", "li", "code"),
    *("table", "thead", "tr", "th", "th", "tbody", "tr", "td", "code", "td"),
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_a_hostile_text_renders_as_itself_in_every_place_and_adds_no_element(text: str) -> None:
    page = read(CONTEXTS.format(code=code(text), cell=cell(text)))
    assert page.tags == ELEMENTS, page.html
    assert page.codes == [one_line(text)] * 5, page.html  # verbatim: not one character lost
    assert page.comments == []


@pytest.mark.parametrize(
    "text", ["**bold**", "</table><tr><td>x", "a \\| b", "[l](https://e.example)", "<b>x</b>"]
)
def test_the_same_text_written_plainly_is_not_inert(text: str) -> None:
    """The check above can fail: outside a code span the text makes elements or loses
    characters (a plain word there makes the same elements, less the code spans)."""
    plain = [t for t in ELEMENTS if t != "code"]
    assert read(CONTEXTS.replace("{code}", "word").replace("{cell}", "word")).tags == plain
    page = read(CONTEXTS.replace("{code}", text).replace("{cell}", text))
    assert page.tags != plain or text not in "".join(page.prose)


def test_line_breaks_show_as_a_mark_and_nul_as_cmark_shows_it() -> None:
    assert one_line("a\nb\r\nc\rd\x00") == f"a{BREAK_MARK}b{BREAK_MARK}c{BREAK_MARK}d\ufffd"
    assert read(f"x {code('')} y").codes == [" "]  # an empty text is still a code span


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("plain", "`plain`"),
        ("a`b", "``a`b``"),
        ("``x```", "```` ``x``` ````"),
        (" x", "`  x `"),
        ("a|b", "`a|b`"),
    ],
)
def test_a_code_span_is_fenced_past_every_backtick_run_and_padded_at_the_edges(
    text: str, want: str
) -> None:
    assert code(text) == want
    assert read(code(text)).codes == [text]


def test_a_cell_escapes_every_pipe_and_an_empty_cell_stays_empty() -> None:
    assert cell("a|b") == "`a\\|b`" and cell("") == ""
    page = read("| a | b |\n|---|---|\n|  | x |\n")
    assert page.tags.count("td") == 2


def test_a_fenced_block_holds_any_text_and_no_line_of_it_closes_the_block() -> None:
    text = "first\n```\n````mermaid\n</pre><b>x</b>\r\n~~~\nlast"
    block = fence(text, "mermaid")
    assert block.startswith("`````mermaid\n")
    page = read(f"{block}\n\nafter")
    assert page.tags == ["pre", "code", "p"]
    assert page.codes == [text.replace("\r\n", "\n") + "\n"]
    assert page.elements[1][1] == {"class": "language-mermaid"}


@pytest.mark.parametrize(
    ("url", "href"),
    [
        ("https://github.com/o/r/tree/omg/runs/pr-2", "https://github.com/o/r/tree/omg/runs/pr-2"),
        ("https://h.example/a b)(<x>\"'`", "https://h.example/a%20b%29%28%3Cx%3E%22%27%60"),
        ("http://127.0.0.1:8080/o/r/tree/x*y_z", "http://127.0.0.1:8080/o/r/tree/x*y_z"),
    ],
)
def test_a_link_goes_where_its_url_says_and_nowhere_else(url: str, href: str) -> None:
    page = read(f"see {link('run branch', url)} now")
    assert page.tags == ["p", "a"] and page.hrefs() == [href]
    assert "".join(page.prose).strip() == "see run branch now"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "/relative", "data:text/html,x", ""])
def test_only_a_web_url_becomes_a_link(url: str) -> None:
    assert link("run branch", url) == "run branch"


@pytest.mark.parametrize(
    ("login", "shown"),
    [
        ("octocat", "@octocat"),
        ("mona-lisa", "@mona-lisa"),
        ("dependabot[bot]", "@dependabot[bot]"),
        ("evil](https://x.example)", "`@evil](https://x.example)`"),
        ("a--b", "`@a--b`"),
        ("**b**", "`@**b**`"),
    ],
)
def test_a_mention_names_a_real_login_and_shows_anything_else_as_code(
    login: str, shown: str
) -> None:
    assert mention(login) == shown
    if shown.startswith("`"):
        assert read(shown).codes == [f"@{login}"]


@pytest.mark.parametrize("name", [*HOSTILE, "review-loop", "a" * 500, "é" * 30], ids=range(25))
def test_a_marker_value_cannot_end_the_comment_it_sits_in(name: str) -> None:
    value = marker_value(name)
    assert len(value) <= MARKER_NAME + 7
    assert set(value) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789%._~-")
    marker = f"<!-- omg:sticky pr=2 graph={value} -->"
    page = read(f"{marker}\n### headline\n")
    assert page.comments == [marker[4:-3]] and page.tags == ["h3"]
    assert "".join(page.prose).strip() == "headline"


def test_a_marker_value_keeps_plain_names_and_tells_names_apart() -> None:
    assert marker_value("review-loop") == "review-loop"
    assert marker_value("pr_1.v2~x") == "pr_1.v2~x"
    values = {marker_value(n) for n in ["x", "x ", "x --> y", "x-->y", "a" * 500, "a" * 501]}
    assert len(values) == 6
