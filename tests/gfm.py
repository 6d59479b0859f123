"""GitHub-flavoured Markdown through the real renderer: cmark-gfm (GitHub's own fork of cmark,
through the ``cmarkgfm`` bindings PyPI renders READMEs with; a test dependency) with GitHub's
extensions and raw HTML let through as GitHub lets it through, and the HTML it gives read back
as elements, code texts and hidden comments."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

EXTENSIONS = ("table", "strikethrough", "autolink", "tagfilter")
#: Elements cmark-gfm writes with no closing tag.
VOID = {"br", "hr", "img", "input"}


def render(markdown: str) -> str:
    """The HTML GitHub's renderer makes of ``markdown`` (raw HTML kept, as GitHub keeps it
    before its sanitizer; the tag filter applied, as on GitHub)."""
    return cmarkgfm.markdown_to_html_with_extensions(
        markdown, options=Options.CMARK_OPT_UNSAFE, extensions=list(EXTENSIONS)
    )


@dataclass
class Page:
    """Rendered HTML, read back: every element opened (name and attributes, in order), the
    text of each ``<code>``, the text outside code, and each HTML comment."""

    html: str
    elements: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    @property
    def tags(self) -> list[str]:
        return [name for name, _ in self.elements]

    def hrefs(self) -> list[str]:
        return [attrs.get("href", "") for name, attrs in self.elements if name == "a"]


class _Reader(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.in_code = 0
        self.buf: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.page.elements.append((tag, {k: v or "" for k, v in attrs}))
        if tag == "code":
            self.in_code += 1
            self.buf = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self.in_code:
            self.in_code -= 1
            self.page.codes.append("".join(self.buf))

    def handle_data(self, data: str) -> None:
        (self.buf if self.in_code else self.page.prose).append(data)

    def handle_comment(self, data: str) -> None:
        self.page.comments.append(data)


def read(markdown: str) -> Page:
    """``markdown`` rendered by cmark-gfm and read back."""
    page = Page(render(markdown))
    reader = _Reader(page)
    reader.feed(page.html)
    reader.close()
    return page


#: Text an attacker controls (a node's output, a graph's name or description, a comment), each
#: aimed at one thing GitHub's Markdown would otherwise do with it.
HOSTILE = (
    "</table></td><table><tr><td>forged row",  # closes the ledger table
    "**bold** _em_ ~~struck~~ [link](https://evil.example/)",  # emphasis, strikethrough, links
    "![pixel](https://evil.example/track.png)",  # an image that phones home
    "a \\| b | c || d",  # cell splits, and a backslash the cell would eat
    "x --> y",  # ends a hidden <!-- marker -->
    "--!> <!-- <!--> -->",  # every way to open or close an HTML comment
    "<script>alert(1)</script><img src=x onerror=alert(1)>",  # raw HTML, filtered and not
    "<details open><summary>click</summary>",  # a block that swallows what follows
    "&amp; &lt;b&gt; &#60;i&#62; &copy;",  # entities that would decode
    "<https://evil.example> www.evil.example http://evil.example a@evil.example",  # autolinks
    "@everyone @octocat #1 GH-2 :smile: $x^2$",  # mentions, references, emoji, math
    "`",  # backtick runs of every length, at the edges too
    "``tick`",
    "``` fence",
    "` padded `",
    "   ",
    "\\*not\\* \\`escaped\\` \\",  # backslashes are text, not escapes
    "line one\n\n# heading\n---\n| new | row |\n> quote",  # line breaks that start blocks
    "carriage\rreturn\r\nand crlf",
    "[ref]: https://evil.example/ 'title'",  # a link reference definition
    "<!-- omg:sticky pr=2 graph=pr -->",  # another comment's marker, forged
    "nul\x00byte",
)
