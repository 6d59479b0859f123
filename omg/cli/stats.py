"""`omg stats`: what every run on the run branches came to, per graph and graph version — as
text, JSON or Markdown, two versions side by side, or a page of plots."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from omg.errors import StateError, UsageError
from omg.github.markdown import cell, code
from omg.stats.compare import compare
from omg.stats.figures import Share
from omg.stats.summary import Summary, summarise
from omg.stats.tables import Line, Table, comparison_table, summary_tables

Format = Literal["text", "json", "markdown"]
_AGO = re.compile(r"(\d{1,5})([dh])")


def since_time(text: str, now: datetime) -> datetime:
    """``--since``: a date (``2026-12-01``, UTC midnight), an ISO 8601 time, or a span back from
    ``now`` (``7d``, ``12h``)."""
    ago = _AGO.fullmatch(text.strip())
    if ago:
        n, unit = int(ago.group(1)), ago.group(2)
        return now - (timedelta(days=n) if unit == "d" else timedelta(hours=n))
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since {text!r} is not a date (2026-12-01), an ISO 8601 time or a span such "
            "as 7d or 12h"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def gather(fetch: str | None, since: str | None, graph: str | None) -> Summary:
    """Every run's facts from the run branches (``fetch``: REMOTE's, fetched into
    ``refs/remotes/`` only), summarised."""
    from omg.git.repo import open_repo
    from omg.github.env import git_tokens
    from omg.stats.intake import take

    repo = open_repo(Path.cwd(), tokens=git_tokens(os.environ))
    if repo is None:
        raise StateError("`omg stats` runs inside a git repository (it reads the run branches)")
    cutoff = since_time(since, datetime.now(UTC)) if since is not None else None
    if fetch is not None:
        repo.fetch_runs(fetch)
    taken = [take(blobs) for blobs in repo.run_records(fetch)]
    return summarise(taken, remote=fetch, since=cutoff, graph=graph)


def render(summary: Summary, fmt: Format, versus: tuple[str, str] | None) -> str:
    """The summary (or the two versions side by side) in ``fmt``."""
    side = compare(summary, *versus) if versus is not None else None
    if fmt == "json":
        out: dict[str, Any] = {"summary": _plain(summary)}
        if side is not None:
            out["comparison"] = _plain(side)
        return json.dumps(out, indent=2, sort_keys=True)
    tables = [comparison_table(side)] if side is not None else summary_tables(summary)
    if fmt == "markdown":
        head = _headline(summary, code)
        return "\n\n".join([f"### omg stats · {head}", *map(markdown_table, tables)]) + "\n"
    return "\n\n".join([f"omg stats: {_headline(summary, repr)}", *map(text_table, tables)])


def _headline(s: Summary, quote: Callable[[str], str]) -> str:
    """How many runs were counted, of which graph, since when, from where (the names a person
    typed, quoted)."""
    since = f" since {s.since.isoformat(timespec='minutes')}" if s.since is not None else ""
    which = f" of graph {quote(s.graph)}" if s.graph is not None else ""
    where = (
        f"{quote(s.remote)}'s run branches" if s.remote is not None else "the local run branches"
    )
    damaged = f"; {len(s.damaged)} damaged, not counted" if s.damaged else ""
    return f"{s.runs} run(s){which}{since} on {where}{damaged}"


def text_table(t: Table) -> str:
    """Aligned columns; text from records with every unprintable character escaped (no
    terminal control sequence reaches the screen)."""
    rows = [t.head, *(tuple(_inert(c.text) if c.untrusted else c.text for c in r) for r in t.rows)]
    if not t.rows:
        return _title_text(t.title) + "\n  (none)"
    widths = [max(len(r[i]) for r in rows) for i in range(len(t.head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join([_title_text(t.title), *("  " + ln for ln in lines)])


def _title_text(title: Line) -> str:
    return "".join(repr(c.text) if c.untrusted else c.text for c in title)


def _inert(text: str) -> str:
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def markdown_table(t: Table) -> str:
    """A GFM table: text from records as code spans, ``$`` escaped (GitHub reads math)."""
    title = "".join(code(c.text) if c.untrusted else _ours(c.text) for c in t.title)
    if not t.rows:
        return f"#### {title}\n\n_none_"
    lines = ["| " + " | ".join(_ours(h) for h in t.head) + " |", "|" + "---|" * len(t.head)]
    lines += [
        "| " + " | ".join(cell(c.text) if c.untrusted else _ours(c.text) for c in r) + " |"
        for r in t.rows
    ]
    return f"#### {title}\n\n" + "\n".join(lines)


def _ours(text: str) -> str:
    return text.replace("$", "\\$").replace("|", "\\|")


def _plain(value: object) -> Any:
    """A summary as JSON data: dataclasses as objects (a share with its proportion and
    interval), times as ISO 8601."""
    if isinstance(value, Share):
        return {"k": value.k, "n": value.n, "p": value.p, "interval": value.interval}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def write_page(summary: Summary, versus: tuple[str, str] | None, out: Path) -> str:
    """The statistics' page (with the two versions side by side when compared) to ``out``."""
    from omg.pages import stats_page
    from omg.state.store import atomic_write

    side = compare(summary, *versus) if versus is not None else None
    try:
        atomic_write(out, stats_page(summary, side))
    except OSError as exc:
        raise StateError(f"cannot write {out}: {exc.strerror or exc}") from None
    return f"wrote {out}"
