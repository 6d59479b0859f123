"""The report: a leg's outcome as Markdown (sticky PR comment, step summary) and annotations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omg import ledgerrows, schedule
from omg.ci import findingtable
from omg.github.annotations import ANNOTATION_CAP, workflow_command
from omg.github.markdown import cell, code, fence, link, marker_value, mention
from omg.github.outputs import clip_markdown
from omg.graph.findings import Finding
from omg.graph.mermaid import MAX_EDGES, MAX_TEXT, edge_count, render_mermaid
from omg.graph.model import Graph
from omg.kinds import EXHAUSTED_GATE_SUFFIX
from omg.leg.caps import standing_text
from omg.records import GraphChangeRecord
from omg.state import Event, State
from omg.state.ledger import ledger as book_of

#: A GitHub comment holds at most 65,536 characters; omg keeps well under it.
COMMENT_CAP = 60_000
#: Past this many nodes a diagram helps nobody (and Mermaid refuses large texts).
MERMAID_NODES = 200
SUMMARY_ROWS = 1000
COMMENT_ROWS = 60

ICON = {
    "passed": "✅",
    "failed": "❌",
    "paused": "⏸️",
    "continuing": "🔁",
    "superseded": "⏭️",
    "running": "▶️",
}


@dataclass(frozen=True)
class Links:
    run_branch: str = ""
    workflow_run: str = ""
    repo: str = ""  # the repository's web page: a PR run's lanes are compared there


@dataclass(frozen=True)
class Situation:
    """What the report says about the run: its status word, the gate, the judged state."""

    status: str  # passed | failed | paused | continuing | superseded | running
    gate: str = ""
    state_ref: str = ""  # the full commit a decision is bound to
    head_sha: str = ""
    next: str = "none"  # none | gate | dispatch | wait
    note: str = ""  # one line of what else happened (a refusal, a supersede, a dispatch)


def marker(number: int, graph_name: str) -> str:
    """The hidden line that finds the sticky comment of a PR and graph again, on any machine;
    the name is encoded, so no name can end the comment early (or match another graph's)."""
    return f"<!-- omg:sticky pr={number} graph={marker_value(graph_name)} -->"


#: The characters of a person's guidance the report quotes.
GUIDANCE_SHOWN = 500
#: The ledger columns that hold text from outside omg (node ids, failure details).
_UNTRUSTED = {"NODE", "DETAIL"}


def _table(graph: Graph, events: Sequence[Event], limit: int) -> str:
    rows = ledgerrows.execution_rows(graph, book_of(events, ledgerrows.limits(graph)))
    head = ledgerrows.EXECUTION_COLUMNS
    shown = rows
    if len(rows) > limit:  # keep what needs eyes: anything not passed, then the newest
        busy = [r for r in rows if not r[2].startswith("PASS")]
        rest = [r for r in rows if r[2].startswith("PASS")]
        shown = (busy + rest[::-1])[:limit]
    lines = [
        "| " + " | ".join(h.lower() for h in head) + " |",
        "|" + "---|" * len(head),
    ]
    quoted = [h in _UNTRUSTED for h in head]
    lines += [
        "| " + " | ".join(cell(c) if q else c for c, q in zip(r, quoted, strict=True)) + " |"
        for r in shown
    ]
    if len(rows) > len(shown):
        lines.append(f"\n_{len(rows) - len(shown):,} more rows: `omg status RUN_ID` lists all._")
    return "\n".join(lines)


def diagram(graph: Graph, state: State) -> str:
    """The Mermaid graph coloured by status, or a line saying why not: past 200 nodes, or
    past what GitHub's Mermaid draws (500 edges, 50,000 characters)."""
    edges = edge_count(graph)
    size = f"{len(graph.nodes):,} nodes and {edges:,} edges"
    if len(graph.nodes) > MERMAID_NODES:
        return f"_The graph has {size}, too many for a diagram; `omg graph FILE` renders it._"
    if edges > MAX_EDGES:
        return (
            f"_The graph has {size}, more than the {MAX_EDGES} edges GitHub's Mermaid draws; "
            "`omg graph FILE` renders it._"
        )
    status = {
        nid: {"awaiting": "paused"}.get(s, s)
        for nid, s in schedule.statuses(graph, state["nodes"]).items()
    }
    if state["paused_at"]:
        status[state["paused_at"]] = "paused"
    for gate in state["gates"]:
        if gate.endswith(EXHAUSTED_GATE_SUFFIX):
            status.setdefault(gate, "passed")
    text = render_mermaid(graph, status)
    if len(text) > MAX_TEXT:
        return (
            f"_The graph has {size}; its diagram takes {len(text):,} characters, more than the "
            f"{MAX_TEXT:,} GitHub's Mermaid draws; `omg graph FILE` renders it._"
        )
    return fence(text, "mermaid")


def answer(key: str, login: str, text: str) -> str:
    """A one-time answer to a comment: its hidden key, whom it answers (``addressee``), the
    commenter's mention, then ``text`` (omg's Markdown, whose untrusted parts are code spans
    already)."""
    return f"{key}\n{addressee(login)}\n{mention(login)} {text}"


def addressee(login: str) -> str:
    """The hidden line naming whom a reply answers: how a job finds omg's recent replies to
    one login (logins are case-insensitive), to answer a burst of its comments once."""
    return f"<!-- omg:to={marker_value(login.lower())} -->"


def gate_commands(gate: str, ref: str) -> str:
    short = f" @{ref[:7]}" if ref else ""
    one = " ".join(gate.split())
    again = "/omg retry <guidance>\n" if gate.endswith(EXHAUSTED_GATE_SUFFIX) else ""
    return fence(f"/omg approve {one}{short}\n/omg reject {one}{short} <reason>\n{again}")


def _headline(graph: Graph, state: State, sit: Situation) -> str:
    word = {
        "paused": f"paused at gate {code(sit.gate)}" if sit.gate else "paused",
        "continuing": "continuing in the next leg",
        "superseded": "superseded by a newer head",
    }.get(sit.status, sit.status)
    icon = f"{ICON[sit.status]} " if sit.status in ICON else ""
    return f"### {icon}omg · {code(graph.name)} · {word}"


def _next(graph: Graph, state: State, sit: Situation) -> str:
    if sit.next == "gate":
        question = graph.node(sit.gate).description if sit.gate in graph.by_id else ""
        ask = f" {code(question.strip())}" if question and question.strip() else ""
        return (
            f"**Next:** a person with write access decides gate {code(sit.gate)}.{ask} "
            f"Comment:\n\n{gate_commands(sit.gate, sit.state_ref)}"
        )
    if sit.next == "dispatch":
        return "**Next:** the next leg was dispatched; this comment updates when it ends."
    if sit.status == "paused" and state.get("pull_request", {}).get("fork"):
        return FORK_NEXT
    paused = _paused_for(state)
    if paused:
        return paused
    if sit.status == "failed":
        return (
            "**Next:** fix what failed, then comment `/omg retry` to re-run the failed nodes "
            "(`/omg retry <guidance>` gives them your words as `{{ guidance }}`)."
        )
    if sit.status == "running":
        return "**Next:** a leg is running; this comment updates as its nodes start and settle."
    if sit.status == "superseded":
        return "**Next:** nothing here; the run for the new head reports below or in its comment."
    return "**Next:** nothing; the run is settled."


#: The next step of a fork's run that stopped with work left: no leg dispatches the next, since
#: that would run the fork's code with the model key again without a person having looked.
FORK_NEXT = (
    "**Next:** the run stopped with work left. Its head lives in a fork, so no leg starts the "
    "next one by itself: a writer comments `/omg review` (or `/omg retry`) to continue."
)


def lanes(state: State, links: Links) -> str:
    """A pull request run's lanes, each a branch of this repository (never of the PR) and a
    link comparing it with the head it started from; '' for other runs or none."""
    pr, rid = state.get("pull_request"), state["run_id"]
    mine = sorted(
        (name, lane["branch"])
        for name, lane in (state.get("worktrees") or {}).items()
        if lane["branch"].startswith(f"omg/work/{rid}/")
    )
    if pr is None or not mine or not links.repo:
        return ""
    compare = f"{links.repo}/compare/{pr['head_sha']}..."
    shown = " · ".join(f"{code(b)} ({link('compare', compare + b)})" for _, b in mine)
    return (
        "Lane work, offered as branches of this repository (never pushed to the pull "
        f"request): {shown}"
    )


def _paused_for(state: State) -> str:
    """The next step of a run paused for a provider's limit or at a spend cap ('' otherwise)."""
    last = state["legs"][-1] if state["legs"] and state["status"] == "paused" else None
    wait, capped = (last.get("wait"), last.get("capped")) if last is not None else (None, None)
    if last is not None and last.get("reason") == "limit" and wait is not None:
        what = "a usage limit" if wait["kind"] == "session" else "an API rate limit"
        resets = f" (resets {code(wait['resets'])}, the provider's words)" if wait["resets"] else ""
        return (
            f"**Next:** nothing failed — {code(wait['node_id'])} stopped at {what}{resets}: "
            f"{code(wait['said'])}. The resume workflow's schedule continues the run from "
            f"{wait['not_before']} (a limit still in force pauses it again); comment "
            "`/omg retry` to try sooner."
        )
    if last is not None and last.get("reason") == "spend_cap" and capped is not None:
        if capped["scope"] == "day":
            which = f"the per-day spend cap ({capped['key']} UTC, all runs of the repository)"
            raise_ = "`day_budget_usd` / the `day-budget-usd` input"
            later = ", or it continues by itself on the next UTC day (the scheduled resume)"
        else:
            which = f"the pull request spend cap (PR #{capped['key']}, all its runs)"
            raise_, later = "`pr_budget_usd` / the `pr-budget-usd` input", ""
        return (
            f"**Next:** nothing failed — the run paused at {which}: {standing_text(capped)}; "
            f"{code(capped['node_id'])} was not started. A person with write access continues "
            f"it with `/omg approve-spend <amount>` (that much more for this run), or raise the "
            f"cap ({raise_}){later}."
        )
    return ""


def _spend_line(state: State, events: Sequence[Event] = ()) -> str:
    """``**Spent:** $0.42 over 2 leg(s) · $3.20 of $20 today · $1.10 of $5 on this PR``; an
    unpriced execution (codex without a price) makes it ``unknown (N tokens unpriced; …)``."""
    spent = f"${state['cost_usd']:.4f}"
    book = book_of(events)
    if book.cost_unknown:
        spent = ledgerrows.spent_unknown(state["cost_usd"], book.tokens)
    line = f"**Spent:** {spent} over {len(state['legs'])} leg(s)"
    caps = state["legs"][-1].get("caps", []) if state["legs"] else []
    shown = [standing_text(c) for c in caps]
    if state.get("approved_usd"):
        shown.append(f"${state.get('approved_usd', 0.0):.2f} approved beyond the caps")
    return line + "".join(f" · {x}" for x in shown) + "."


def markdown(
    graph: Graph,
    state: State,
    events: Sequence[Event],
    sit: Situation,
    links: Links,
    *,
    rows: int,
    extra: str = "",
) -> str:
    """The report body: headline, what was judged, the next step, the ledger and the diagram."""
    where = [f"run {code(state['run_id'])}"]
    if sit.head_sha:
        where.insert(0, f"judging head {code(sit.head_sha[:7])}")
    if sit.state_ref:
        where.append(f"state {code(sit.state_ref[:7])}")
    if links.run_branch:
        where.append(link("run branch", links.run_branch))
    if links.workflow_run:
        where.append(link("workflow run", links.workflow_run))
    parts = [
        _headline(graph, state, sit),
        " · ".join(where),
    ]
    pr = state.get("pull_request")
    if pr is not None and "graph_change" in pr:
        parts.append(
            graph_change(pr["graph_change"], pr.get("base_ref", ""), pr.get("base_sha", ""))
        )
    parts.append(_next(graph, state, sit))
    offered = lanes(state, links)
    if offered:
        parts.append(offered)
    if sit.note:
        parts.append(f"> {code(sit.note)}")
    if state.get("guidance"):  # a person's words: shown as a code span, never as Markdown
        said = state.get("guidance", "")
        said = said if len(said) <= GUIDANCE_SHOWN else said[:GUIDANCE_SHOWN] + " …"
        by = state.get("guidance_by") or "someone"
        parts.append(f"**Guidance** given by {code(by)}: {code(said)}")
    parts += [
        _spend_line(state, events),
        _table(graph, events, rows),
        *filter(None, [findingtable.report(graph, state["nodes"])]),
        diagram(graph, state),
    ]
    if extra:
        parts.append(extra)
    return "\n\n".join(parts) + "\n"


def graph_change(
    change: GraphChangeRecord, base_ref: str, base_sha: str, *, added: bool = False
) -> str:
    """What a pull request changes of the graph that judges it: said, and its lint shown as
    text. The graph of its base judges it (``added``: the base has none, so nothing runs)."""
    files = ", ".join(code(f) for f in change["files"])
    base = f"{code(base_ref)} at {code(base_sha[:7])}" if base_ref else code(base_sha[:7])
    if added:
        said = (
            f"**This pull request adds the graph** {files}. Its base ({base}) has no such file, "
            "and a pull request is judged by the graph of the branch it targets, never by its "
            "own: nothing runs now. The new graph applies once merged, to the pull requests "
            "after it."
        )
    else:
        said = (
            f"**This pull request changes the graph** ({files}). It is judged by the graph of "
            f"its base ({base}), as the branch it targets has it; the new graph applies once "
            "merged."
        )
    errors, warnings = change["errors"], change["warnings"]
    lines = change["findings"]
    said += f" `omg lint` of the new graph: {errors} error(s), {warnings} warning(s)"
    if not lines:
        return said + "."
    more = errors + warnings - len(lines)
    shown = "\n".join(lines) + (f"\n… and {more} more" if more > 0 else "")
    return said + ":\n\n" + fence(shown)


def not_run(name: str, change: GraphChangeRecord, base_ref: str, base_sha: str) -> str:
    """The report on a pull request that adds the graph its workflow names: not run."""
    head = f"### omg · {code(name)} · not run: a new graph"
    return f"{head}\n\n{graph_change(change, base_ref, base_sha, added=True)}\n"


def comment(
    graph: Graph, state: State, events: Sequence[Event], sit: Situation, links: Links, number: int
) -> str:
    body = markdown(graph, state, events, sit, links, rows=COMMENT_ROWS)
    return marker(number, graph.name) + "\n" + clip_markdown(body, COMMENT_CAP)


def annotation_lines(
    graph: Graph, state: State, source: str, findings: Sequence[Finding]
) -> tuple[list[str], str]:
    """Workflow commands for failed nodes (errors) and lint advisories (warnings), each kind
    capped at GitHub's 10 per step; and a summary line counting what the cap left out."""
    failed = [(nid, rec) for nid, rec in state["nodes"].items() if rec["verdict"] == "FAIL"]
    errors = [
        workflow_command(
            "error",
            str(rec.get("detail") or "failed")[:500],
            {"file": source, "title": f"omg: node {nid} failed ({rec.get('cause') or 'FAIL'})"},
        )
        for nid, rec in failed
    ]
    warns = [
        workflow_command(
            "warning",
            f.message,
            {"file": f.file, **({"line": f.line} if f.line else {}), "title": f"omg lint {f.code}"},
        )
        for f in findings
        if f.severity != "error"
    ]
    left = max(0, len(errors) - ANNOTATION_CAP) + max(0, len(warns) - ANNOTATION_CAP)
    note = ""
    if left:
        note = (
            f"_{len(errors)} failed node(s) and {len(warns)} lint advisory(ies); GitHub shows "
            f"{ANNOTATION_CAP} of each kind per step, so {left} are listed only here "
            "(`omg status` and `omg lint` list all)._"
        )
    return errors[:ANNOTATION_CAP] + warns[:ANNOTATION_CAP], note
