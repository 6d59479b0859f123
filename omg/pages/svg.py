"""Inline SVG pictures: labelled bars, histograms, and the text helpers they share — every label
escaped, a long one cut to fit with its whole text in a tooltip."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from omg.pages.page import esc

#: About how wide a character of the 12px sans-serif is, for fitting labels without a script.
CHAR_W = 6.6


def fit(text: str, width: float) -> str:
    """``text`` cut to about ``width`` pixels, with ``…`` when cut."""
    room = max(1, int(width / CHAR_W))
    return text if len(text) <= room else text[: max(0, room - 1)] + "…"


def label(x: float, y: float, text: str, *, anchor: str = "start", cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{klass}>{esc(text)}</text>'


def tip(text: str) -> str:
    """A tooltip: the whole text of what it sits in."""
    return f"<title>{esc(text)}</title>"


def frame(width: float, height: float, body: str, *, cls: str, name: str) -> str:
    """An ``<svg>`` of that size, named for assistive technology (``name`` is text)."""
    return (
        f'<svg class="{cls}" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label="{esc(name)}">{body}</svg>'
    )


def bars(
    items: Sequence[tuple[str, float]],
    show: Callable[[float], str],
    *,
    name: str,
    width: int = 420,
    second: Sequence[float] | None = None,
) -> str:
    """Horizontal bars, one per (label, value), the value written after each; with ``second``,
    a second bar under each (another version's value of the same label)."""
    if not items:
        return ""
    pad_l = min(180, max(60, int(max(len(k) for k, _ in items) * CHAR_W) + 8))
    room = width - pad_l - 90
    values = [v for _, v in items] + list(second or ())
    top = max(values) or 1.0
    step = 34 if second is not None else 22
    out = []
    for i, (key, value) in enumerate(items):
        y = 6 + i * step
        out.append(label(pad_l - 6, y + 12, fit(key, pad_l - 10), anchor="end"))
        rows = [(value, "bar")] + ([(second[i], "bar b")] if second is not None else [])
        for j, (v, cls) in enumerate(rows):
            w = max(1.0, room * v / top) if v else 0.0
            yy = y + j * 13
            out.append(
                f'<rect class="{cls}" x="{pad_l}" y="{yy + 2}" width="{w:.1f}" height="11">'
                f"{tip(f'{key}: {show(v)}')}</rect>"
            )
            out.append(label(pad_l + w + 4, yy + 12, show(v), cls="small"))
    height = 12 + len(items) * step
    return frame(width, height, "".join(out), cls="bars", name=name)


def histogram(
    bins: Sequence[tuple[str, int]],
    *,
    name: str,
    width: int = 420,
    height: int = 150,
    tips: Sequence[str] = (),
) -> str:
    """Vertical bars, one per (bin label, count), the count above each; ``tips`` say more of
    each bin than its label does (its whole range)."""
    if not bins:
        return ""
    pad_b, pad_t = 30, 16
    room = height - pad_b - pad_t
    slot = (width - 20) / len(bins)
    top = max(n for _, n in bins) or 1
    out = [f'<line class="axis" x1="10" y1="{height - pad_b}" x2="{width - 10}" '
           f'y2="{height - pad_b}"/>']  # fmt: skip
    for i, (key, n) in enumerate(bins):
        h = room * n / top
        x = 10 + i * slot
        out.append(
            f'<rect class="bar" x="{x + 2:.1f}" y="{height - pad_b - h:.1f}" '
            f'width="{max(1.0, slot - 4):.1f}" height="{h:.1f}">'
            f"{tip(f'{tips[i] if i < len(tips) else key}: {n}')}</rect>"
        )
        out.append(label(x + slot / 2, height - pad_b - h - 3, str(n), anchor="middle",
                         cls="small"))  # fmt: skip
        out.append(label(x + slot / 2, height - pad_b + 14, fit(key, slot), anchor="middle",
                         cls="small"))  # fmt: skip
    return frame(width, height, "".join(out), cls="histogram", name=name)


def figure(svg: str, caption: str) -> str:
    """A plot with its caption (text), or nothing when there is no plot."""
    if not svg:
        return ""
    return f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>"
