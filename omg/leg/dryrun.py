"""Dry runs: every node's invocation rendered with the given inputs; nothing runs."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from omg.graph.load import resolve_inputs
from omg.graph.model import Graph
from omg.graph.placeholders import ResolveError, ShellText, render_shell
from omg.graph.shell.scan import spots
from omg.graph.tokens import TOKEN, Token, render
from omg.nodefile import on_disk
from omg.runners.base import Invocation, Runner
from omg.runners.registry import default_runners


def _budget(node: float | None, graph: float | None) -> float | None:
    """The --max-budget-usd a first attempt gets: the node's, capped by the whole run's."""
    if graph is None:
        return node
    return graph if node is None else min(node, graph)


def render_plan(
    graph: Graph,
    source: Path,
    given: Mapping[str, str],
    *,
    spent: float = 0.0,
    passed: frozenset[str] = frozenset(),
    env: Mapping[str, str] | None = None,
) -> str:
    """Every node's invocation; for a run under way (``spent`` so far, ``passed`` nodes), the
    run budget each argv is given is what is left of it, as the next leg would give it.
    ``env`` is the environment a leg would start from: a runtime's argv may depend on it (a
    model endpoint of the user's own it is pointed at)."""
    inputs = resolve_inputs(graph, given)
    left = None if graph.budget_usd is None else max(0.0, graph.budget_usd - spent)

    def resolve(tok: Token) -> str:
        if tok.kind == "inputs":
            return inputs[tok.ref]
        if tok.kind == "feedback":
            return f"<feedback of {tok.ref}, empty before round 1>"
        if tok.kind == "guidance":
            return "<guidance given with --retry-failed, empty when none>"
        form = "content" if tok.inline else "path"
        return f"<{form} of artifacts/{on_disk(tok.ref)}.out>"

    runners = default_runners()
    later = _after_spend(graph, passed)
    out = [
        f"Graph {graph.name!r} ({source}): {len(graph.nodes)} node(s), concurrency "
        f"{graph.concurrency}, on_fail {graph.on_fail}"
    ]
    for nid in graph.topo_order:
        n = graph.node(nid)
        after = f" (after {', '.join(n.depends_on)})" if n.depends_on else ""
        out.append(f"\n- {nid} [{n.kind}]{after}")
        if nid in passed:
            out.append("    passed: not run again (unless a feedback loop re-arms it)")
            continue
        if n.kind == "gate":
            out.append(f"    gate: {n.description or '(no description)'}")
            continue
        shell: ShellText | None = None
        if n.kind == "shell":
            shell = _shell(n.run or "", resolve)
            text = shell.script
        else:
            text = render(n.prompt or "", resolve)
        rt = runners.get("shell" if n.kind == "shell" else n.runtime)
        inv = Invocation(
            node=n,
            text=text,
            cwd=Path("."),
            env=dict(env or {}),
            timeout_s=n.timeout_s,
            session_id="<new-session-uuid>",
            resume_session="<parent session>" if n.handoff == "session" else None,
            budget_usd=_budget(n.budget_usd, left),
        )
        try:
            argv = rt.argv(inv) if rt is not None else [f"<no {n.runtime} runtime in this omg>"]
            if rt is not None and nid in later and graph.budget_usd and inv.budget_usd:
                argv = _left_shown(rt, inv, argv, graph.budget_usd)
        except Exception as exc:  # a runtime that cannot render still lets the plan print
            argv = [f"<{exc}>"]
        out.append(f"    argv: {shlex.join(argv)}")
        if shell is not None:
            out.extend(_values(shell))
        for name, value in n.env:  # a placeholder in an env: value is rendered as data too
            if value is not None and TOKEN.search(value):
                out.append(f"    env: {name}={shlex.quote(render(value, resolve))}   ({value})")
        if n.kind == "agent":
            out.append(f"    stdin (the prompt): {shlex.quote(text)}")
        where = f"worktree {n.worktree.name}" if n.worktree else (n.cwd or ".")
        out.append(
            f"    cwd: {render(where, resolve)}   timeout: {n.timeout}"
            + (f"   budget: ${n.budget_usd:.2f}" if n.budget_usd else "")
            + (f"   budget: {n.budget_tokens} tokens an execution" if n.budget_tokens else "")
        )
        if n.success_check.verify is not None:
            verify = _shell(n.success_check.verify.command, resolve)
            out.append(f"    verify: sh -c {shlex.quote(verify.script)}")
            out.extend(_values(verify))
        if n.retry.max:
            out.append(f"    retry: up to {n.retry.max} on {', '.join(n.retry.on)}")
        if n.feedback is not None:
            body = " → ".join(graph.feedback_body(nid))
            out.append(f"    feedback: re-runs {body} at most {n.feedback.max} time(s)")
        execs = graph.executions_of(nid)
        price = f", ${execs * n.budget_usd:.2f} at its budget" if n.budget_usd else ""
        out.append(f"    worst case: {execs} execution(s){price}")
    budget = f"; run budget ${graph.budget_usd:.2f}" if graph.budget_usd else ""
    if graph.budget_usd and (spent or passed):
        budget += f": ${spent:.4f} spent, ${left or 0.0:.4f} left"
    priced = sum(graph.executions_of(n.id) * (n.budget_usd or 0.0) for n in graph.nodes)
    spend = f", ${priced:.2f} across the budgeted nodes" if priced else ""
    out.append(f"\nworst case: {graph.worst_case_executions()} node execution(s){spend}{budget}")
    out.append("dry run: nothing was executed")
    return "\n".join(out)


def _after_spend(graph: Graph, passed: frozenset[str]) -> frozenset[str]:
    """The agent nodes a leg may start after another agent execution of it has spent: every
    agent but those the leg starts at once (the first ready nodes in order, up to the graph's
    concurrency) and those no other agent may settle before (the others all depend on them)."""
    agents = [nid for nid in graph.topo_order if graph.node(nid).kind == "agent"]
    agents = [nid for nid in agents if nid not in passed]
    first: set[str] = set()
    for nid in graph.topo_order:
        if len(first) >= graph.concurrency:
            break
        node = graph.node(nid)
        if nid in passed or not passed.issuperset(node.depends_on):
            continue
        if node.kind == "gate":  # the leg pauses there
            break
        first.add(nid)
    return frozenset(
        a
        for a in agents
        if a not in first and any(o != a and o not in graph.descendants(a) for o in agents)
    )


def _left_shown(rt: Runner, inv: Invocation, argv: list[str], run_budget: float) -> list[str]:
    """``argv`` with the run budget it is given shown as what will be left of it (the runtime
    renders the figure its own way: the words that change with it are the ones replaced)."""
    other = rt.argv(replace(inv, budget_usd=(inv.budget_usd or 0.0) + 1.0))
    if len(other) != len(argv):
        return argv
    most = f", at most ${inv.node.budget_usd:.2f}" if inv.node.budget_usd else ""
    shown = f"<what is left of ${run_budget:.2f} when it starts{most}>"
    return [shown if a != b else a for a, b in zip(argv, other, strict=True)]


def _shell(text: str, resolve: Callable[[Token], str]) -> ShellText:
    """The script and values a command would run with; a value that cannot be carried shows
    why in its place."""
    try:
        return render_shell(text, spots, resolve)
    except ResolveError as exc:
        return ShellText(text + f"   <{exc}>")


def _values(shell: ShellText) -> list[str]:
    """One line per value a command gets in its environment: a given input exactly (quoted as
    sh would need it), a run-time value by what it will be."""
    lines = []
    for v in shell.values:
        m = TOKEN.fullmatch(v.placeholder)
        shown = shlex.quote(v.value) if m is not None and m.group(1) == "inputs" else v.value
        lines.append(f"    env: {v.variable}={shown}   ({v.placeholder})")
    return lines
