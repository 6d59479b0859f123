"""Parity advisories: what review-loop linters elsewhere warn about — a verdict token no check
reads, an unanchored ``result_matches``, ``bypassPermissions`` (refused as root), and a
``max_hops`` below the loops' worst case."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from omg.graph.findings import Finding
from omg.graph.model import Graph, Node
from omg.graph.verdicts import verdict_tokens
from omg.runtimes import RULES

if TYPE_CHECKING:
    from omg.graph.locate import Locator

#: A pattern's start anchor (after inline flags such as ``(?m)``) and its end anchor.
_START = re.compile(r"^(?:\(\?[aiLmsux]+\))*(?:\^|\\A)")
_END = re.compile(r"(?:\$|\\Z|\\z)\)?$")


def parity(graph: Graph, at: Locator) -> Iterator[Finding]:
    """Every parity advisory of a valid graph (severity warning)."""
    readers = _readers(graph)
    for n in graph.nodes:
        yield from _verdicts(at, n, readers)
        yield from _unanchored(at, n)
        yield from _bypass(at, n)
    yield from _hops(graph, at)


def _readers(graph: Graph) -> str:
    """Every text a check reads a reply with: result_matches, verify commands and patterns,
    and the commands of shell nodes (a later node may grep an artifact); in lower case."""
    texts: list[str] = []
    for n in graph.nodes:
        sc = n.success_check
        texts += [sc.result_matches or ""]
        if sc.verify is not None:
            texts += [sc.verify.command, sc.verify.output_matches or ""]
        texts += [n.run or ""]
    return "\n".join(texts).lower()


def _read(token: str, readers: str) -> bool:
    words = re.split(r":\s?", token.lower())
    return all(w in readers for w in words)


def _verdicts(at: Locator, n: Node, readers: str) -> Iterator[Finding]:
    if n.kind != "agent" or not n.prompt:
        return
    unread = verdict_tokens(n.prompt)
    if not unread or any(_read(t, readers) for t in unread):
        return
    shown = " / ".join(unread)
    first = re.escape(unread[0]).replace("\\ ", " ")
    yield at.finding(
        "verdict-unread",
        f"the prompt demands the verdict {shown}, but no check reads it — the node passes "
        "whatever it answers, so the verdict decides nothing; read it with a success check, "
        f"e.g. success_check: {{exit_zero: true, result_matches: '(?m)^{first}$'}}",
        n.id,
        "prompt",
        severity="warning",
    )


def _unanchored(at: Locator, n: Node) -> Iterator[Finding]:
    pattern = n.success_check.result_matches
    if pattern is None or _START.search(pattern) or _END.search(pattern):
        return
    yield at.finding(
        "result-unanchored",
        f"result_matches {pattern!r} is not anchored: it is searched anywhere in the reply, so "
        f"a reply saying 'NOT {pattern}' or quoting the instructions passes too; anchor it to "
        f"a line, e.g. '(?m)^{pattern}$', or to the reply's start with '^'",
        n.id,
        "success_check.result_matches",
        severity="warning",
    )


def _bypass(at: Locator, n: Node) -> Iterator[Finding]:
    """A permission mode a runtime's CLI refuses as root (``runtimes.RULES``), at any agent
    node that sets it without that CLI's way out for sandboxes."""
    if n.kind != "agent":
        return
    for rules in RULES.values():
        root = rules.as_root
        if root is None or n.permission_mode != root.mode:
            continue
        if any(name == root.escape for name, _ in n.env):
            continue
        yield at.finding(
            "bypass-permissions", root.advice, n.id, "permission_mode", severity="warning"
        )


def _hops(graph: Graph, at: Locator) -> Iterator[Finding]:
    """A hop cap the loops can hit before their own max: a loop stopped short of its rounds."""
    rounds = {d: graph.by_id[d].feedback for d in graph.arcs}
    per = {d: fb.max for d, fb in rounds.items() if fb is not None}
    worst = sum(per.values())
    if worst <= graph.max_hops:
        return
    loops = ", ".join(f"{d}: {k}" for d, k in per.items())
    set_ = "max_hops" in graph.data
    yield at.finding(
        "max-hops-short",
        f"max_hops {graph.max_hops} is below the loops' worst case of {worst} round(s) "
        f"({loops}): the hop cap would stop a loop before its own max; raise max_hops to "
        f"{worst} or lower a feedback.max",
        None,
        "max_hops" if set_ else "name",
        severity="warning",
    )
