"""The semantic validator: every rule JSON Schema cannot express, run on the model (pure)."""

from __future__ import annotations

import math
import re
from collections.abc import Generator, Iterator

from omg.graph import structured
from omg.graph.cycles import cycles
from omg.graph.durations import parse_duration
from omg.graph.feedback import check_arcs, closest
from omg.graph.findings import Finding
from omg.graph.limits import check_limits
from omg.graph.locate import Locator
from omg.graph.model import VERIFY_TIMEOUT_CEILING_S, Graph, Node, Worktree
from omg.graph.positions import Positions
from omg.graph.references import SHELL_FIELDS, check_references
from omg.graph.schema import KINDS
from omg.graph.shell.scan import spots
from omg.graph.tokens import refusal, spans
from omg.kinds import CAUSES
from omg.runtimes import DEFAULT_RUNTIME, RESERVED_RUNTIMES, RULES

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: The longest duration a graph may give (a timeout, a backoff): what a leg can wait for.
MAX_DURATION = "5 days (120h)"
MAX_DURATION_S = 5 * 24 * 3600.0
_SHAPE = {  # kind → ((has prompt, has run), what that kind needs)
    "agent": ((True, False), "an agent node needs prompt: and no run:"),
    "shell": ((False, True), "a shell node needs run: and no prompt:"),
    "gate": ((False, False), "a gate takes neither prompt: nor run:"),
}


def validate(graph: Graph, file: str, positions: Positions | None = None) -> list[Finding]:
    """Every semantic error of ``graph``, each located by file, line and node; [] when valid."""
    at = Locator(graph, file, positions)
    out = list(_structure(graph, at))
    for p in check_arcs(graph):
        out.append(at.finding(p.code, p.message, p.node, p.field))
    for r in check_references(graph):
        out.append(at.finding(r.code, r.message, r.node, r.field, offset=(r.offset, r.text)))
    out.extend(_positions(graph, at))
    out.extend(check_limits(graph, file, positions))
    out.sort(key=lambda f: (f.line or 0, f.column or 0))
    return out


def _positions(graph: Graph, at: Locator) -> Iterator[Finding]:
    """Placeholders of a shell command that stand where sh would read a value as code."""
    for node in graph.nodes:
        for field, text in node.interpolated_fields():
            if field not in SHELL_FIELDS:
                continue
            for spot in spots(text, spans(text)):
                if spot.refused:
                    why = f"{field}: {refusal(spot, text[spot.start : spot.end])}"
                    offset = (spot.start, text)
                    yield at.finding("placeholder-position", why, node.id, field, offset=offset)


def node_rules(graph: Graph, file: str, positions: Positions | None = None) -> list[Finding]:
    """Each node's own rules alone, none about another node: what a fragment's body is held
    to before any graph uses it."""
    at = Locator(graph, file, positions)
    return [
        at.finding(code, msg, n.id, field, index=i)
        for i, n in enumerate(graph.nodes)
        for code, field, msg in _node(n)
    ]


def _structure(graph: Graph, at: Locator) -> Iterator[Finding]:
    first: dict[str, int] = {}
    for i, n in enumerate(graph.nodes):
        if n.id in first:
            line = at.line(n.id, "id", index=first[n.id])
            yield at.finding(
                "duplicate-id",
                f'node id "{n.id}" is declared twice (first at line '
                f"{line}) — ids must be unique: they name artifacts, records and "
                "dependencies",
                n.id,
                "id",
                index=i,
            )
        first.setdefault(n.id, i)
        if not all(NAME.fullmatch(part) for part in n.id.split("/")):
            yield at.finding(
                "bad-id",
                f'node id "{n.id}" must be letters, digits, ".", "_" or '
                '"-", starting with a letter or digit',
                n.id,
                "id",
                index=i,
            )
        for j, p in enumerate(n.depends_on):
            if p == n.id:
                yield at.finding(
                    "self-dependency",
                    "depends_on names the node itself — a node "
                    "cannot wait for its own result; to repeat it, use retry:",
                    n.id,
                    f"depends_on.{j}",
                    index=i,
                )
            elif p not in graph.by_id:
                yield at.finding(
                    "unknown-dependency",
                    f'depends_on names unknown node "{p}"{closest(p, graph.ids)}',
                    n.id,
                    f"depends_on.{j}",
                    index=i,
                )
        yield from (at.finding(code, msg, n.id, field, index=i) for code, field, msg in _node(n))
        yield from _handoff(graph, n, at, i)
    for path in cycles(graph):
        start, closer = path[0], path[-2]
        yield at.finding(
            "cycle",
            f"dependency cycle {' → '.join(path)} — each node waits for the one before it, so "
            "none can start; depends_on must stay acyclic: drop one of these dependencies, or, "
            f'if "{closer}" should send work back to "{start}", drop "{start}"\'s depends_on '
            f'"{closer}" and declare feedback: {{rerun: {start}, max: N}} on "{closer}"',
            start,
            "depends_on",
        )
    yield from _worktrees(graph, at)
    if graph.budget_usd is not None and not math.isfinite(graph.budget_usd):
        yield at.finding("bad-budget", "budget_usd must be a finite amount", None, "budget_usd")
    for key in ("pr_budget_usd", "day_budget_usd"):
        cap = getattr(graph, key)
        if cap is not None and not math.isfinite(cap):
            yield at.finding("bad-budget", f"{key} must be a finite amount", None, key)


def _node(n: Node) -> Iterator[tuple[str, str, str]]:
    """(code, field, message) for one node's own fields."""
    has = (n.prompt is not None, n.run is not None)
    if has != _SHAPE[n.kind][0]:
        yield "node-kind", "", f"{_SHAPE[n.kind][1]} — {KINDS}"
    if n.kind == "agent" and n.runtime in RESERVED_RUNTIMES:
        yield (
            "runtime",
            "runtime",
            f'runtime "{n.runtime}" is reserved for a later omg and cannot run in this one; '
            f"use runtime: {DEFAULT_RUNTIME} (the default) or drop the key",
        )
    if n.kind == "agent":
        yield from _refused(n)
    yield from structured.node_rules(n)
    sc = n.success_check
    yield from _regex(sc.result_matches, "success_check.result_matches")
    if sc.verify is not None:
        yield from _regex(sc.verify.output_matches, "success_check.verify.output_matches")
        field = "success_check.verify.timeout"
        secs = yield from _duration(sc.verify.timeout, field)
        if secs is not None and secs > VERIFY_TIMEOUT_CEILING_S:
            yield (
                "verify-timeout",
                field,
                (
                    f"verify timeout {sc.verify.timeout} exceeds the 10m "
                    "ceiling — a verification runs on the node's critical "
                    "path; give longer work its own node"
                ),
            )
        if not sc.verify.command.strip():
            yield (
                "verify-command",
                "success_check.verify.command",
                (
                    "verify needs a command — an evidence check with nothing to run would pass "
                    "every time"
                ),
            )
    if n.kind != "gate":
        yield from _duration(n.timeout, "timeout")
        yield from _duration(n.idle_timeout, "idle_timeout")
    if n.retry.max < 0:
        yield "retry-max", "retry.max", f"retry.max {n.retry.max} must not be negative"
    for c in n.retry.on:
        if c not in CAUSES:
            yield (
                "retry-cause",
                "retry.on",
                (f'unknown retry.on cause "{c}" (want one of: {", ".join(CAUSES)})'),
            )
        elif c == "no_progress":
            yield (
                "retry-cause",
                "retry.on",
                "retry.on cause no_progress is a loop's, never an attempt's: a stalled loop "
                "escalates as exhaustion does (feedback.on_exhausted); remove it from retry.on",
            )
    if n.retry.backoff is not None:
        yield from _duration(n.retry.backoff.initial, "retry.backoff.initial")
        yield from _duration(n.retry.backoff.max, "retry.backoff.max")
        if not math.isfinite(n.retry.backoff.factor):
            yield (
                "bad-backoff",
                "retry.backoff.factor",
                f"retry.backoff.factor {n.retry.backoff.factor} must be a finite number",
            )
    if n.budget_usd is not None and not (math.isfinite(n.budget_usd) and n.budget_usd > 0):
        yield "bad-budget", "budget_usd", f"budget_usd {n.budget_usd} must be a finite amount > 0"
    if n.cwd is not None and n.worktree is not None:
        yield (
            "cwd-and-worktree",
            "cwd",
            (
                f'the node declares both cwd "{n.cwd}" and worktree '
                f'"{n.worktree.name}" — a worktree node runs in its '
                "managed checkout, so drop one"
            ),
        )


def _regex(pattern: str | None, field: str) -> Iterator[tuple[str, str, str]]:
    if pattern is None:
        return
    try:
        re.compile(pattern)
    except (re.error, OverflowError, RecursionError) as exc:  # a{99999999999}, ((((…
        if not isinstance(exc, re.error):
            exc = re.error("the pattern is too large or nested too deeply")
        yield (
            "bad-regex",
            field,
            (
                f'{field} "{pattern}" is not a valid regular expression: '
                f"{exc} — it is a Python re pattern; escape literal "
                "characters like ( [ * with a backslash"
            ),
        )


def _duration(text: str, field: str) -> Generator[tuple[str, str, str], None, float | None]:
    """Yields a problem or nothing; returns the seconds when the text parses."""
    try:
        secs = parse_duration(text)
    except ValueError as exc:
        yield "bad-duration", field, f"{field}: {exc}"
        return None
    if not secs > 0:
        yield "bad-duration", field, f"{field} {text} must be positive"
        return None
    if secs > MAX_DURATION_S:
        yield (
            "bad-duration",
            field,
            f"{field} {text} is longer than {MAX_DURATION} — no GitHub Actions job runs "
            "that long (5 days on a self-hosted runner, 6 hours on a hosted one); give at "
            "most 120h, e.g. 6h",
        )
        return None
    return secs


def _handoff(graph: Graph, n: Node, at: Locator, i: int) -> Iterator[Finding]:
    if n.handoff != "session":
        return
    why = "a session handoff resumes its single parent agent's session"
    if n.kind != "agent":
        msg = f"handoff: session on a {n.kind} node — only an agent node can resume a session"
    elif len(n.depends_on) != 1:
        msg = (
            f"handoff: session with {len(n.depends_on)} parents — {why}; use handoff: "
            "artifact for a root node or for fan-in"
        )
    else:
        parent = graph.by_id.get(n.depends_on[0])
        if parent is None or (parent.kind == "agent" and parent.runtime == n.runtime):
            return
        if parent.kind == "agent":
            msg = (
                f'handoff: session with parent "{parent.id}" on runtime {parent.runtime} — '
                f"a {n.runtime} session cannot resume it; use handoff: artifact"
            )
        else:
            msg = (
                f'handoff: session with {parent.kind} parent "{parent.id}" — a {parent.kind} '
                "records no agent session to resume; use handoff: artifact"
            )
    yield at.finding("handoff-session", msg, n.id, "handoff", index=i)


def _refused(n: Node) -> Iterator[tuple[str, str, str]]:
    """An agent node's keys its runtime has no meaning for (``runtimes.RULES``)."""
    for refused in RULES[n.runtime].refuses:
        if getattr(n, refused.key) is not None:
            yield f"{n.runtime}-field", refused.key, f"runtime: {n.runtime} with {refused.fix}"


def _worktrees(graph: Graph, at: Locator) -> Iterator[Finding]:
    seen: dict[str, Node] = {}
    for i, n in enumerate(graph.nodes):
        wt = n.worktree
        if wt is None:
            continue
        if not NAME.fullmatch(wt.name):
            yield at.finding(
                "worktree-name",
                f'worktree name "{wt.name}" must be letters, digits, '
                '".", "_" or "-", starting with a letter or digit',
                n.id,
                "worktree",
                index=i,
            )
        if wt.push and wt.branch is None:
            yield at.finding(
                "worktree-push",
                "worktree push: true needs branch: — only an existing branch can be pushed back to",
                n.id,
                "worktree.push",
                index=i,
            )
        other = seen.setdefault(wt.name, n)
        if (
            other is not n
            and other.worktree is not None
            and ((other.worktree.branch, other.worktree.push) != (wt.branch, wt.push))
        ):
            yield at.finding(
                "worktree-conflict",
                f"worktree is {_spelled(wt)} here but {_spelled(other.worktree)} on node "
                f'"{other.id}" — nodes sharing a worktree share one checkout; declare it the '
                "same way everywhere",
                n.id,
                "worktree",
                index=i,
            )


def _spelled(wt: Worktree) -> str:
    """A worktree as YAML would spell it: ``{name: pr, branch: "x", push: true}``."""
    parts = [f"name: {wt.name}"]
    if wt.branch is not None:
        parts.append(f'branch: "{wt.branch}"')
    if wt.push:
        parts.append("push: true")
    return "{" + ", ".join(parts) + "}"
