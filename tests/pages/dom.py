"""Pages read back as their elements: each element's name and attribute names in document
order (what markup made), and the text — to compare two pages that differ only in words."""

from __future__ import annotations

from html.parser import HTMLParser


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, tuple[str, ...]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, tuple(sorted(k for k, _ in attrs))))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def elements(page: str) -> list[tuple[str, tuple[str, ...]]]:
    """Every element of ``page``: its name and its attributes' names, in order."""
    reader = _Reader()
    reader.feed(page)
    reader.close()
    return reader.elements


def text(page: str) -> str:
    reader = _Reader()
    reader.feed(page)
    reader.close()
    return "".join(reader.text)
