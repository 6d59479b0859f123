"""A self-contained page: one HTML document with its CSS inline, its pictures inline SVG, and a
policy that lets it load nothing and run nothing — text from a record is escaped, never markup."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

#: Nothing from the network, no script, no plugin, no form; inline style only.
POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)

CSS = """
:root{--fg:#1f2328;--mute:#59636e;--line:#d1d9e0;--bg:#fff;--soft:#f6f8fa;--pass:#1a7f37;
--fail:#cf222e;--wait:#9a6700;--pend:#818b98;--run:#0969da;--loop:#8250df}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,
sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid
var(--line);padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
.meta{color:var(--mute);margin:0 0 12px}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
code{background:var(--soft);padding:1px 4px;border-radius:4px}
pre{background:var(--soft);padding:8px 10px;border-radius:6px;white-space:pre-wrap;
overflow-wrap:anywhere;margin:4px 0;max-height:24em;overflow:auto}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
svg{display:block;max-width:100%;height:auto;margin:6px 0}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;fill:var(--fg)}
svg .small{font-size:10.5px;fill:var(--mute)}
.passed{fill:#dafbe1;stroke:var(--pass)}.failed{fill:#ffebe9;stroke:var(--fail)}
.paused,.awaiting{fill:#fff8c5;stroke:var(--wait)}.pending{fill:var(--soft);stroke:var(--pend)}
.running{fill:#ddf4ff;stroke:var(--run)}.looping{fill:#fbefff;stroke:var(--loop)}
.bar{fill:#54aeff}.bar.b{fill:#d2a8ff}.edge{stroke:var(--pend);fill:none;stroke-width:1.4}
.arc{stroke:var(--loop);fill:none;stroke-width:1.4;stroke-dasharray:5 4}
.axis{stroke:var(--line);stroke-width:1}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:12px;height:12px;border:1.5px solid;border-radius:3px;
margin-right:4px;vertical-align:-2px}
.legend i.passed{background:#dafbe1;border-color:var(--pass)}
.legend i.failed{background:#ffebe9;border-color:var(--fail)}
.legend i.paused{background:#fff8c5;border-color:var(--wait)}
.legend i.pending{background:var(--soft);border-color:var(--pend)}
.legend i.looping{background:#fbefff;border-color:var(--loop)}
.legend i.running{background:#ddf4ff;border-color:var(--run)}
.legend i.bar-a{background:#54aeff;border-color:#54aeff}
.legend i.bar-b{background:#d2a8ff;border-color:#d2a8ff}
.plots{display:flex;flex-wrap:wrap;gap:8px 28px}.plots figure{margin:0}
figcaption{font-size:12.5px;color:var(--mute)}
"""


def esc(text: object) -> str:
    """Text as inert HTML: every ``<``, ``>``, ``&``, ``"`` and ``'`` escaped."""
    return html.escape(str(text), quote=True)


def document(title: str, heading: str, meta: str, sections: Iterable[str]) -> str:
    """The whole page. ``title`` and ``heading`` are text (escaped here); ``meta`` and
    ``sections`` are HTML this package wrote, their texts escaped already."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f'<h1>{esc(heading)}</h1>\n<p class="meta">{meta}</p>\n'
        + "\n".join(sections)
        + "\n</body>\n</html>\n"
    )


def section(key: str, heading: str, body: str) -> str:
    """A titled section (``key`` is omg's own id for it)."""
    return f'<section id="{esc(key)}">\n<h2>{esc(heading)}</h2>\n{body}\n</section>'


def table(
    head: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    cls: str = "",
    numeric: Sequence[int] = (),
) -> str:
    """A table of text: every cell escaped."""
    top = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "\n".join(
        "<tr>"
        + "".join(
            f'<td class="num">{esc(c)}</td>' if i in numeric else f"<td>{esc(c)}</td>"
            for i, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    klass = f' class="{esc(cls)}"' if cls else ""
    return f"<table{klass}>\n<thead><tr>{top}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"
