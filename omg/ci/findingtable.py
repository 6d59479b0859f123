"""Pure: the findings of each structured review loop as a Markdown table (the sticky comment
and the step summary) — read from each declarer's latest structured reply, every cell inert."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omg import replyschema
from omg.github.markdown import cell, code
from omg.graph.model import Graph

#: Findings shown per loop, and the characters of one cell.
ROWS = 20
CELL = 200


@dataclass(frozen=True)
class Findings:
    """One loop's findings: its declarer, the round its reply was given in, and the items."""

    node: str
    round: int
    items: tuple[Any, ...]


def latest(graph: Graph, nodes: Mapping[str, Mapping[str, object]]) -> list[Findings]:
    """Each structured declarer's findings (``feedback.findings``) in its latest recorded
    reply, in graph order; a loop whose latest reply found nothing is left out."""
    out = []
    for node in graph.nodes:
        fb = node.feedback
        rec = nodes.get(node.id)
        if fb is None or fb.findings is None or rec is None or "output" not in rec:
            continue
        try:
            found = replyschema.get(rec["output"], fb.findings)
        except KeyError:
            continue
        items = tuple(found) if isinstance(found, list) else (found,)
        if items and found is not None:
            out.append(Findings(node.id, int(str(rec.get("round") or 0)), items))
    return out


def report(graph: Graph, nodes: Mapping[str, Mapping[str, object]]) -> str:
    """The findings section of a run's report ("" when no structured loop has findings)."""
    return markdown(latest(graph, nodes))


def markdown(found: Sequence[Findings], rows: int = ROWS) -> str:
    """A heading and a table per loop ("" when no loop has findings): a column per field of
    the findings (in the order they first appear), each value a code span."""
    parts = []
    for f in found:
        fields = _columns(f.items)
        head = f"**Findings** of {code(f.node)} (round {f.round}, its latest reply):"
        lines = [
            head,
            "",
            "| " + " | ".join(cell(k) for k in fields) + " |",
            "|" + "---|" * len(fields),
        ]
        for item in f.items[:rows]:
            lines.append("| " + " | ".join(cell(_text(item, k)) for k in fields) + " |")
        if len(f.items) > rows:
            lines.append(f"\n_{len(f.items) - rows} more: `omg status RUN --node {f.node}`._")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _columns(items: Sequence[Any]) -> list[str]:
    keys: list[str] = []
    for item in items:
        if not isinstance(item, Mapping):
            return ["finding"]
        keys += [str(k) for k in item if str(k) not in keys]
    return [_header(k) for k in keys] or ["finding"]


def _header(key: str) -> str:
    """A column name as a table header: word characters alone (the reply names them)."""
    plain = "".join(c if c.isalnum() or c in "_-" else "_" for c in key)[:40]
    return plain or "_"


def _text(item: Any, column: str) -> str:
    if not isinstance(item, Mapping):
        value = item
    else:
        value = next((v for k, v in item.items() if _header(str(k)) == column), None)
    text = "" if value is None else replyschema.as_text(value)
    text = " ".join(text.split())
    return text if len(text) <= CELL else text[:CELL] + " …"
