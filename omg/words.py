"""A person's words, judged before omg keeps or shows them — pure: whether they show anything
(``visible``), whether they are text at all (``undecodable``: not valid UTF-8), the bounded
``excerpt`` a record or a reply quotes of words omg did not write, and text made ``inert``
(no control character a terminal would act on)."""

from __future__ import annotations

import re
import unicodedata

#: How many characters of a comment's words a refusal records and a reply quotes.
EXCERPT = 200

#: Control characters but tab and newline: C0, DEL and C1 (ESC starts every escape sequence).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): drawn as nothing
#: whatever their category — the Hangul fillers (letters), the Khmer inherent vowels, variation
#: selectors, the invisible operators, tags. Inclusive, as (first, last).
_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
#: Characters drawn as blank space though no property says so: the Braille blank.
_BLANK = frozenset({0x2800})
#: Categories that draw nothing of their own: controls, formats, surrogates, private use,
#: unassigned, every separator (spaces of every width, line and paragraph separators), and
#: marks — a combining mark shows only on a base character.
_UNSEEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Mc", "Me"})


def _seen(ch: str) -> bool:
    point = ord(ch)
    if point in _BLANK or any(lo <= point <= hi for lo, hi in _IGNORABLE):
        return False
    return unicodedata.category(ch) not in _UNSEEN


def visible(text: str) -> bool:
    """Whether ``text`` shows anything: a character a reader sees, not only spaces of any
    kind, zero-width or bidi controls, fillers, or combining marks with no base."""
    return any(_seen(ch) for ch in text)


def undecodable(text: str) -> str:
    """Why ``text`` is not valid UTF-8 ('' when it is): the first lone surrogate it holds —
    a byte that was no UTF-8 (Python's surrogate escape of argv and the environment), or a
    ``\\udXXX`` JSON escape no encoder pairs."""
    try:
        text.encode("utf-8")  # the codec finds it at C speed: a comment may be 65,536 long
    except UnicodeEncodeError as exc:
        point, at = ord(text[exc.start]), exc.start + 1
        if 0xDC80 <= point <= 0xDCFF:
            return f"byte 0x{point - 0xDC00:02X} at character {at}"
        return f"a lone surrogate U+{point:04X} at character {at}"
    return ""


def excerpt(text: str, limit: int = EXCERPT) -> str:
    """``text`` as a record or a reply may quote it: whole up to ``limit`` characters, else
    its first ``limit`` and a mark saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters cut]"


def inert(text: str) -> str:
    """``text`` with every control character but tab and newline shown as ``\\xNN``: what a
    node printed can neither colour, move the cursor of, nor retitle the reader's terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
