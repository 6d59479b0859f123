"""The pages a reader meets — README.md and docs/*.md — read as the tests need them: their fenced
code blocks (each with its page and line) and their links, outside code."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_CLOSE = re.compile(r"^\s*```\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: its page, the line of its opening fence, its language, its text
    (dedented as far as the fence is indented, as in a list item)."""

    page: Path
    line: int
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT).as_posix()}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of ``page``, in order."""
    out: list[Block] = []
    opened: tuple[int, str, str] | None = None
    body: list[str] = []
    for n, line in enumerate(page.read_text().splitlines(), 1):
        if opened is None:
            if m := _FENCE.match(line):
                opened, body = (n, m.group(1), m.group(2)), []
        elif _CLOSE.match(line):
            text = textwrap.dedent("\n".join(body) + "\n") if body else ""
            out.append(Block(page, opened[0], opened[2], text))
            opened = None
        else:
            body.append(line)
    assert opened is None, f"{page.name}:{opened[0]}: a code fence is never closed"
    return out


def all_blocks(lang: str | None = None) -> list[Block]:
    """Every page's blocks, README first; only those of ``lang`` when it is given."""
    return [b for page in PAGES for b in blocks(page) if lang is None or b.lang == lang]


def unfenced(page: Path) -> str:
    """The page with its fenced blocks blanked, line for line."""
    kept: list[str] = []
    inside = False
    for line in page.read_text().splitlines():
        if (_CLOSE if inside else _FENCE).match(line):
            inside = not inside
            line = ""
        kept.append("" if inside else line)
    return "\n".join(kept)


def prose(page: Path) -> str:
    """The page without its fenced blocks and code spans: the text links are read from."""
    return re.sub(r"`[^`\n]*`", "", unfenced(page))


def links(page: Path) -> list[tuple[int, str]]:
    """Each Markdown link's line and target on ``page``."""
    return [
        (n, m.group(1))
        for n, line in enumerate(prose(page).splitlines(), 1)
        for m in re.finditer(r"\]\(([^()\s]+)\)", line)
    ]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lower-cased, punctuation dropped, spaces as
    hyphens (github-slugger's rule)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of ``page``'s headings (a repeated one numbered as GitHub numbers it)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in unfenced(page).splitlines():
        m = re.match(r"#{1,6} +(.+?) *#*$", line)
        if m is None:
            continue
        base = slug(m.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out
