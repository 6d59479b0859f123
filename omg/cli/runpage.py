"""`omg report RUN --html FILE`: one run as a page to look at — its graph with each node's
verdict, its executions in time, its loops round by round, its ledger — in one HTML file."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from omg import ledgerrows
from omg.errors import StateError
from omg.github.markdown import code, link
from omg.graph.build import graph_from_data
from omg.graph.model import Graph
from omg.state import Event
from omg.state.ledger import ledger as book_of
from omg.state.runid import check_run_id
from omg.state.store import RunDir, atomic_write, load_run

_CLOSING = ("node_passed", "node_failed", "node_retried")


def findings(graph: Graph, rundir: RunDir, events: Sequence[Event]) -> dict[int, str]:
    """What each reviewer's round ended with, by the seq of the event that ended it: the
    findings handed back (the latest failed verdict's, kept whole in ``feedback/``), else the
    last thing the reviewer said in its kept transcript (one line)."""
    from omg.runners.registry import agents

    runtimes = agents()
    out: dict[int, str] = {}
    for node in graph.nodes:
        if node.feedback is None:
            continue
        runner = runtimes.get(node.runtime) if node.kind == "agent" else None
        ends = [
            e for e in events
            if e.get("node_id") == node.id and e["event"] in _CLOSING
            and (e["event"] != "node_retried" or e.get("reason") in ("feedback", "exhausted"))
        ]  # fmt: skip
        for ev in ends:
            sid = str(ev.get("session_id") or "")
            kept = rundir.session(sid) if sid else None
            if runner is not None and kept is not None and kept.is_file():
                said = [s.text for s in runner.steps(kept) if s.kind == "text"]
                if said:
                    out[int(ev["seq"])] = said[-1]
        failed = [e for e in ends if e["event"] != "node_passed"]
        payload = rundir.feedback(node.id)  # the findings of the latest verdict that failed
        if failed and payload.is_file():
            out[int(failed[-1]["seq"])] = payload.read_text(encoding="utf-8", errors="replace")
    return out


def write_page(runs_dir: Path, run_id: str, out: Path, artifact: str | None) -> str:
    """Write run ``run_id``'s page to ``out``; with ``artifact`` (in GitHub Actions) the step
    summary says which artifact of the workflow run holds it."""
    from omg.pages import RunView, run_page
    from omg.stats.facts import outcome_of

    rundir = RunDir(runs_dir / check_run_id(run_id))
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
    state, _ = load_run(rundir)
    events = list(rundir.read_events())
    graph = graph_from_data(state["graph"])
    rows = ledgerrows.execution_rows(graph, book_of(events, ledgerrows.limits(graph)))
    status: str = outcome_of(state)
    if state["paused_at"]:
        status = f"paused at gate {state['paused_at']}"
    view = RunView(
        graph, state, events, status, ledgerrows.EXECUTION_COLUMNS, rows,
        findings(graph, rundir, events),
    )  # fmt: skip
    try:
        atomic_write(out, run_page(view))
    except OSError as exc:
        raise StateError(f"cannot write {out}: {exc.strerror or exc}") from None
    said = f"wrote {out} (run {run_id}: {status})"
    if artifact is not None:
        said += "; " + _summary_link(artifact, out.name)
    return said


def _summary_link(artifact: str, name: str) -> str:
    """Tell the step summary where the page is: the artifact of this workflow run."""
    from omg.github.env import step_summary
    from omg.github.outputs import write_summary

    found = step_summary(os.environ)
    if found is None:
        return "not in GitHub Actions, so no step summary names the artifact"
    path, url = found
    where = link("this workflow run", f"{url}#artifacts") if url else "this workflow run"
    write_summary(
        path,
        f"\n**Run page:** the artifact {code(artifact)} of {where} holds {code(name)}, one "
        "self-contained HTML page (the graph, the timeline of executions, the loops' rounds and "
        "the ledger): download it and open it in a browser.\n",
    )
    return f"the step summary names the artifact {artifact}"
