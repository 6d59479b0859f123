"""Inert Markdown: untrusted text shown as text in GitHub's UI (code spans, cells, fences, links).

GitHub renders comments and step summaries as GitHub-flavoured Markdown with raw HTML allowed,
then links mentions, issue numbers and URLs in text. The one construct none of that reaches
is a code span (or a fenced block): inside it there is no emphasis, link, entity, HTML tag,
backslash escape, autolink or mention. So every string omg did not write goes through
``code`` (or ``cell`` in a table, ``fence`` for a block) and nowhere else.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import quote

_BREAK = re.compile(r"\r\n|\r|\n")
_TICKS = re.compile(r"`+")
#: What a line break inside untrusted text shows as: a code span must stay on one line (a
#: break could end the paragraph, the table row or start a block of its own).
BREAK_MARK = "↵"
#: GitHub logins: letters, digits and single hyphens; an app's login ends in ``[bot]``.
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\[bot\])?$")
#: What a link destination takes literally besides letters, digits and ``_.-~``.
_URL_SAFE = ":/?#[]@!$&*+,;=%"
#: Past this length a name in a hidden marker is replaced by its digest.
MARKER_NAME = 120


def one_line(text: str) -> str:
    """``text`` on one line (each line break shown as ``↵``), NUL as U+FFFD as cmark reads it."""
    return _BREAK.sub(BREAK_MARK, text).replace("\x00", "\ufffd")


def _fence_for(text: str, least: int) -> str:
    runs = [len(m) for m in _TICKS.findall(text)]
    return "`" * max(least, max(runs, default=0) + 1)


def code(text: str) -> str:
    """``text`` as an inline code span, shown verbatim (line breaks as ``↵``)."""
    body = one_line(text)
    if not body.strip(" "):  # all spaces (or empty): never stripped, holds no backtick
        return f"`{body or ' '}`"
    fence = _fence_for(body, 1)
    if body[0] in "` " or body[-1] in "` ":  # a space each side, which the renderer strips
        body = f" {body} "
    return f"{fence}{body}{fence}"


def cell(text: str) -> str:
    """``text`` as a table cell: a code span whose ``|`` are escaped (GFM splits cells on an
    unescaped ``|`` even inside a code span, and drops the escaping backslash there)."""
    return code(text).replace("|", "\\|") if text else ""


def fence(text: str, info: str = "") -> str:
    """A fenced code block holding ``text``: the fence is longer than any backtick run in it,
    so no line of ``text`` can close it."""
    body = text if text.endswith("\n") else text + "\n"
    body = body.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    mark = _fence_for(body, 3)
    return f"{mark}{info}\n{body}{mark}"


def link(label: str, url: str) -> str:
    """``[label](url)`` with ``url`` percent-encoded to characters a link destination takes
    literally (no space, parenthesis, angle bracket or quote); a label alone for a non-web url.
    ``label`` is omg's own words."""
    if not url.startswith(("https://", "http://")):
        return label
    return f"[{label}]({quote(url, safe=_URL_SAFE)})"


def mention(login: str) -> str:
    """``@login`` for a real GitHub login (it notifies them); anything else as a code span."""
    return f"@{login}" if _LOGIN.match(login) else code(f"@{login}")


def marker_value(text: str) -> str:
    """``text`` fit for a hidden ``<!-- … -->`` marker: percent-encoded to letters, digits and
    ``%._~-`` (so no ``-->``, ``--!>`` or line break can end the comment), a digest past
    ``MARKER_NAME`` characters. Names of those characters alone are left as they are."""
    encoded = quote(text.encode("utf-8", "surrogatepass"), safe="")
    if len(encoded) <= MARKER_NAME:
        return encoded
    return "sha256-" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
