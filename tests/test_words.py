"""A person's words: whether they show anything, whether they are UTF-8, and the bounded
excerpt omg keeps and quotes of them — tables of the pure rules."""

from __future__ import annotations

import pytest

from omg.words import EXCERPT, excerpt, undecodable, visible

INVISIBLE = [
    "",
    " \t\n\r\x0b\x0c\x1c\x85",  # ASCII and C1 whitespace and separators
    "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f"
    "\u205f\u3000",  # every Zs space
    "\u2028\u2029",  # line and paragraph separators
    "\u200b\u200c\u200d\u2060\ufeff",  # zero-width space, (non-)joiners, word joiner, BOM
    "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",  # bidi
    "\u115f\u1160\u3164\uffa0",  # Hangul fillers: letters that draw nothing
    "\u0301",  # a combining acute alone
    "\u20dd\u0488",  # enclosing marks alone
    "\u0903",  # a spacing mark alone
    "\u2800",  # the Braille blank
    "\u00ad\u034f\u180e\u2061\u2062\u2063\u2064",  # soft hyphen, CGJ, MVS, invisible operators
    "\ufe00\ufe0f\U000e0100",  # variation selectors
    "\U000e0001\U000e0041\U000e007f",  # tags
    "\u17b4\u17b5",  # Khmer inherent vowels
    "\U0001d173\U0001d17a",  # musical beam controls
    "\U0001bca0\U0001bca3",  # shorthand format controls
    "\ue000\U000f0000",  # private use: no glyph anyone agreed on
    "\x00\x07\x1b",  # controls
]

SHOWN = ["a", "e\u0301", "拒否", "🙂", "\u200bno\u200b", "0", ".", "\u3164x", "\u0627"]


@pytest.mark.parametrize("text", INVISIBLE, ids=[repr(t)[:30] for t in INVISIBLE])
def test_text_of_invisible_characters_alone_shows_nothing(text: str) -> None:
    assert not visible(text)


@pytest.mark.parametrize("text", SHOWN, ids=[repr(t) for t in SHOWN])
def test_text_with_one_character_a_reader_sees_shows(text: str) -> None:
    assert visible(text)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("plain", ""),
        ("拒否 🙂", ""),
        ("abc\udcff", "byte 0xFF at character 4"),  # argv's byte 0xff, surrogate-escaped
        ("\udc80x", "byte 0x80 at character 1"),
        ("a\ud83d", "a lone surrogate U+D83D at character 2"),  # a JSON escape never paired
        ("\ude00", "a lone surrogate U+DE00 at character 1"),
    ],
)
def test_text_that_no_utf8_holds_is_told_by_its_first_stray_character(text: str, why: str) -> None:
    assert undecodable(text) == why


def test_an_excerpt_keeps_short_words_whole_and_marks_what_it_cut() -> None:
    assert excerpt("x" * EXCERPT) == "x" * EXCERPT
    long = "/omg approve ok " + "y" * 65_000
    cut = excerpt(long)
    assert cut.startswith(long[:EXCERPT]) and len(cut) < EXCERPT + 60
    assert cut.endswith(f"… [{len(long) - EXCERPT:,} more characters cut]")
    assert excerpt("abcdef", 3) == "abc… [3 more characters cut]"
