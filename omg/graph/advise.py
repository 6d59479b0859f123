"""Advisories: warnings about a valid graph that is likely to waste a run, and its price tag."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from omg.graph.advise_loops import parity
from omg.graph.feedback import check_arc, listing, loop_text
from omg.graph.findings import Finding
from omg.graph.locate import Locator
from omg.graph.model import Graph, Node
from omg.graph.positions import Positions
from omg.graph.projectsettings import project_settings
from omg.graph.references import SHELL_FIELDS, Reach
from omg.graph.tokens import scan
from omg.runtimes import RULES


def advise(graph: Graph, file: str, positions: Positions | None = None) -> list[Finding]:
    """Advisories (severity warning) and the worst-case price (severity info) of a valid graph."""
    at = Locator(graph, file, positions)
    reach = Reach(graph)
    asks = quoters(graph)
    out: list[Finding] = []
    for declarer, body in graph.arcs.items():
        quoted = asks.get(declarer, set())
        out.extend(_unquoted(graph, at, declarer, body, quoted))
        out.extend(_reach(graph, at, reach, declarer, body, quoted))
    for n in graph.nodes:
        out.extend(_node(graph, at, n))
    out.extend(_inputs(graph, at))
    out.extend(parity(graph, at))
    out.extend(project_settings(graph, at))
    out.sort(key=lambda f: (f.line or 0, f.column or 0))
    out.append(_price(graph, at))
    return out


def quoters(graph: Graph) -> dict[str, set[str]]:
    """declarer → the nodes whose interpolated fields quote ``{{ feedback.<declarer> }}``."""
    out: dict[str, set[str]] = {}
    for n in graph.nodes:
        for _, text in n.interpolated_fields():
            for tok in scan(text):
                if tok.kind == "feedback":
                    out.setdefault(tok.ref, set()).add(n.id)
    return out


def _unquoted(
    graph: Graph, at: Locator, declarer: str, body: tuple[str, ...], quoted: set[str]
) -> Iterator[Finding]:
    if not body or quoted & (set(body) - {declarer}):
        return
    target = body[0]
    field = "prompt" if graph.by_id[target].kind == "agent" else "run"
    yield at.finding(
        "feedback-unquoted",
        f'node "{declarer}" re-runs the loop {loop_text(body)} when it fails, but no '
        f"node in it quotes {{{{ feedback.{declarer} }}}} — each round would get the "
        f"input it already ran and likely repeat the same work; quote it in "
        f'"{target}"\'s {field}:',
        target,
        field,
        severity="warning",
    )


def _reach(
    graph: Graph,
    at: Locator,
    reach: Reach,
    declarer: str,
    body: tuple[str, ...],
    quoted: set[str],
) -> Iterator[Finding]:
    """The fan-in reach advisory: a producer the declarer judges that no round can redo."""
    node = graph.by_id[declarer]
    if not body or node.feedback is None or len(node.depends_on) < 2:
        return
    target, inside = body[0], set(body)
    left_out = [
        p
        for p in node.depends_on
        if p in graph.by_id
        and p not in inside
        and graph.by_id[p].kind != "gate"
        and not reach.is_ancestor(p, target)
    ]
    if not left_out:
        return
    who = listing(left_out)
    cover = _covering_target(graph, reach, declarer, left_out, quoted)
    if cover is not None:
        fix = (
            f"Consider rerun: {cover} (loop {loop_text(graph.between(cover, declarer))}), "
            "which covers it and passes the feedback rules"
        )
    else:
        fix = (
            f"No single rerun target covers it and passes the feedback rules; if {who} is "
            f'context the work is judged against, make "{target}" depend on it'
        )
    yield at.finding(
        "feedback-reach",
        f'the arc reruns "{target}", whose loop {loop_text(body)} leaves out {who}, '
        "which this node depends on — if the defect is there, no round can repair "
        f"it and the loop re-runs healthy work until it is exhausted. {fix}. This "
        "advice reads depends_on, not what the prompt judges: ignore it if "
        f"{who} is stable context",
        declarer,
        "feedback.rerun",
        severity="warning",
    )


def _covering_target(
    graph: Graph, reach: Reach, declarer: str, producers: list[str], quoted: set[str]
) -> str | None:
    """The nearest rerun target whose loop holds every producer and still passes the rules.

    Candidates are the common ancestors of the producers, nearest first; an ancestor of a
    target already found has a larger loop, so it is never preferred.
    """
    fb = graph.by_id[declarer].feedback
    claimed = {nid: d for d, body in graph.arcs.items() if d != declarer for nid in body}
    order = {nid: i for i, nid in enumerate(graph.topo_order)}
    common = [
        c
        for c in graph.ancestors(declarer)
        if (fb is None or c != fb.rerun)
        and all(c == p or reach.is_ancestor(c, p) for p in producers)
    ]
    found: list[tuple[int, str]] = []
    for cand in sorted(common, key=lambda c: -order.get(c, 0)):
        if any(reach.is_ancestor(cand, f) for _, f in found):
            continue
        body = set(graph.between(cand, declarer))
        if quoted <= body and next(check_arc(graph, declarer, cand, claimed), None) is None:
            found.append((len(body), cand))
    return min(found)[1] if found else None


def _node(graph: Graph, at: Locator, n: Node) -> Iterator[Finding]:
    sc = n.success_check
    if sc.result_matches is not None and not sc.exit_zero:
        yield at.finding(
            "result-without-exit-zero",
            "result_matches without exit_zero: true — declaring any check drops the "
            "implicit exit-0 requirement, so a run that printed the pattern and then "
            "failed still passes; add exit_zero: true",
            n.id,
            "success_check.result_matches",
            severity="warning",
        )
    if (
        n.kind == "agent"
        and RULES[n.runtime].takes("allowed_tools")  # codex has none: its sandbox bounds it
        and n.allowed_tools is None
        and sc.verify is None
        and n.permission_mode != "bypassPermissions"
    ):
        yield at.finding(
            "no-tool-grant",
            "neither allowed_tools nor a success_check.verify — a tool your settings "
            "do not pre-authorise is denied silently, and a result_matches check "
            "passes on the prose explaining it; name the tools this node needs "
            "(allowed_tools: [] for none), or add a verify command the engine runs",
            n.id,
            severity="warning",
        )
    for field, text in n.interpolated_fields():
        if field not in SHELL_FIELDS and not field.startswith("env."):
            continue
        for tok in scan(text):
            if tok.kind == "artifacts" and tok.inline:
                what = f'node "{tok.ref}"\'s whole reply'
                fix = f"use the path form {{{{ artifacts.{tok.ref} }}}} and read the file"
            elif tok.kind == "feedback":
                what = f'"{tok.ref}"\'s feedback payload (its failed reply)'
                fix = "quote the payload in an agent prompt instead"
            else:
                continue
            yield at.finding(
                "inline-in-shell",
                f"{field}: {tok.text} hands {what} to the command — through its environment, "
                "so it stays data, but one environment variable holds at most 128 KiB, so a "
                f"long reply fails the node; {fix}",
                n.id,
                field,
                severity="warning",
                offset=(tok.start, text),
            )
    yield from _session(graph, at, n)
    yield from _grants(at, n)
    yield from _unpriced(graph, at, n)


#: Commands whose bare grant also allows destructive verbs: (what it allows, narrower grants).
DESTRUCTIVE = {
    "git": (
        "git push --force, git reset --hard, git clean -fdx",
        "Bash(git diff *), Bash(git status)",
    ),
    "gh": ("gh repo delete, gh release delete", "Bash(gh pr view *), Bash(gh pr diff *)"),
    "npm": ("npm publish, npm unpublish", "Bash(npm test), Bash(npm run lint)"),
    "docker": ("docker system prune, docker rm -f", "Bash(docker build *)"),
    "kubectl": ("kubectl delete", "Bash(kubectl get *), Bash(kubectl describe *)"),
    "rm": ("rm -rf on any path", "Bash(rm build/*)"),
    "find": ("find -delete and -exec", "Glob and Grep, which only read"),
}
_BARE = re.compile(r"Bash\((?P<cmd>[A-Za-z0-9_.-]+)(?::\*| \*|\*)\)")


def _grants(at: Locator, n: Node) -> Iterator[Finding]:
    """A grant of every shell command, or of every use of a command with destructive verbs."""
    if n.kind != "agent" or not n.allowed_tools or n.permission_mode == "bypassPermissions":
        return
    for i, grant in enumerate(n.allowed_tools):
        bare = _BARE.fullmatch(grant.strip())
        if grant.strip() in ("Bash", "Bash(*)"):
            what, narrow = "every shell command", "Bash(make test), Bash(git diff *)"
        elif bare is not None and bare["cmd"] in DESTRUCTIVE:
            what, narrow = DESTRUCTIVE[bare["cmd"]]
            what = f"every {bare['cmd']} command, {what} included"
        else:
            continue
        yield at.finding(
            "broad-tool-grant",
            f"allowed_tools grants {grant!r}, which pre-approves {what}, with nothing to stop "
            f"the agent; grant only what the node needs, e.g. {narrow}",
            n.id,
            f"allowed_tools.{i}",
            severity="warning",
        )


def _unpriced(graph: Graph, at: Locator, n: Node) -> Iterator[Finding]:
    """A dollar budget on a node whose runtime reports tokens (codex) and the graph gives no
    price for."""
    if n.kind != "agent" or not RULES[n.runtime].prices_tokens:
        return
    key = n.model or "default"
    if key in graph.prices or (n.budget_usd is None and graph.budget_usd is None):
        return
    yield at.finding(
        "unpriced-budget",
        f"budget_usd cannot be enforced for this {n.runtime} node: {n.runtime} reports tokens, not "
        f"dollars, and prices: has no entry {key!r}; add prices: {{{key}: {{input: …, "
        "output: …}}}} (USD per million tokens), or hold it to budget_tokens: N",
        n.id,
        "budget_usd" if n.budget_usd is not None else "",
        severity="warning",
    )


def _session(graph: Graph, at: Locator, n: Node) -> Iterator[Finding]:
    """A retried attempt of a session handoff starts fresh. (A handoff into another cwd is not
    warned about: claude 2.1.x resumes a session from any directory, tests/claude shows it.)"""
    if n.handoff != "session" or len(n.depends_on) != 1 or n.retry.max == 0:
        return
    yield at.finding(
        "session-retry",
        f"handoff: session with retry — a retried attempt starts a fresh session "
        f'instead of resuming "{n.depends_on[0]}"\'s, so make the prompt work '
        "without that context, or drop retry",
        n.id,
        "retry",
        severity="warning",
    )


def _inputs(graph: Graph, at: Locator) -> Iterator[Finding]:
    raw = graph.data.get("inputs")
    if not isinstance(raw, Mapping):
        return
    for spec in graph.inputs:
        if spec.required and spec.default is not None:
            yield at.finding(
                "input-required-default",
                f'input "{spec.name}" is required but has a default, so it can never '
                "be missing; drop required: or the default",
                None,
                f"inputs.{spec.name}",
                severity="warning",
            )


def _price(graph: Graph, at: Locator) -> Finding:
    """The worst-case number of node executions: a price tag, not a defect."""
    total = graph.worst_case_executions()
    parts = [f"{len(graph.nodes)} node(s) once"]
    loops = [(d, body) for d, body in graph.arcs.items() if body]
    for declarer, body in loops[:3]:
        fb = graph.by_id[declarer].feedback
        parts.append(f"loop {loop_text(body)} up to {fb.max if fb else 0} more round(s)")
    if len(loops) > 3:
        parts.append(f"{len(loops) - 3} more loop(s)")
    retried = [n.id for n in graph.nodes if n.retry.max > 0]
    if retried:
        parts.append(f"retries on {listing(retried)} on top")
    budget = f"; the run budget caps spend at ${graph.budget_usd:.2f}" if graph.budget_usd else ""
    return at.finding(
        "worst-case",
        f"worst case {total} node execution(s): {', '.join(parts)}{budget}",
        None,
        "nodes",
        severity="info",
    )
