"""How a leg run here ended, told to a person: the ledger, the outcome and the next step, each
agent runtime's versions checked alike; with ``--format json`` the outcome as one JSON line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from omg.cli import exits, ledger
from omg.cli.next import next_block
from omg.cli.terminal import Paint
from omg.cli.views import View, per_node
from omg.errors import Hint
from omg.graph.model import Graph
from omg.kinds import EXHAUSTED_GATE_SUFFIX
from omg.ledgerrows import limits
from omg.leg.caps import describe_cap
from omg.leg.wait import describe as describe_wait
from omg.state import NO_RECORD, State
from omg.state.kept import run_ledger
from omg.state.store import RunDir

if TYPE_CHECKING:
    from omg.leg.start import LegEnd


def report(end: LegEnd, runs_dir: Path, asked: View, as_json: bool = False) -> int:
    """The ledger and how the leg ended, for people; with ``as_json`` all of it on stderr and
    the outcome as one JSON line on stdout, the last line there (schemas/status.schema.json)."""
    code, hint, step = _told(end, runs_dir, asked, sys.stderr if as_json else sys.stdout)
    if as_json:
        from omg.cli import machine

        r = end.result
        doc = machine.outcome(
            end.state, r.outcome if r else None, r.reason if r else None, hint, code,
            next_step=step,
        )  # fmt: skip
        print(machine.dumps(doc))
    return code


def _told(
    end: LegEnd, runs_dir: Path, asked: View, out: TextIO
) -> tuple[int, Hint | None, str | None]:
    """Print the leg's end to ``out``: (exit code, the next step's hint, its name when no
    hint words it)."""
    run_id, result, state, graph = end.run_id, end.result, end.state, end.graph
    # the fold keeps each node's CLI version: the whole history is not read for them
    from omg.runners.registry import pin_hint

    for runtime in sorted({n.runtime for n in graph.nodes if n.kind == "agent"}):
        ran = [
            r
            for nid, r in state["nodes"].items()
            if nid in graph.by_id and graph.by_id[nid].runtime == runtime
        ]
        versions = sorted({str(r["cli_version"]) for r in ran if r.get("cli_version")})
        if len(versions) > 1:
            _, how = pin_hint(runtime)
            print(
                f"warning: run {run_id!r} ran its agent nodes with {runtime} "
                f"{', '.join(versions)}; pin one version ({how}) so legs behave alike",
                file=sys.stderr,
            )
    print(file=out)
    book = None if per_node(state, asked) else run_ledger(RunDir(runs_dir / run_id), limits(graph))
    print(ledger.render(graph, state, (), asked=asked, paint=Paint.to(out), book=book), file=out)
    if result is None:
        print(f"\nrun {run_id!r}: nothing to do — {state['status']}", file=out)
        code = {"failed": exits.FAILED, "paused": exits.PAUSED}.get(state["status"], exits.PASSED)
        return code, _standing(state), None
    print(file=out)
    hint: Hint | None = None
    step = None
    if result.outcome == "passed":
        print(f"run {run_id!r} passed.", file=out)
    elif result.outcome == "failed":
        hint = Hint("retry_failed", run_id)
        print(f"run {run_id!r} failed ({result.detail}). {next_block(hint)}", file=out)
    elif result.reason == "gate":
        gate = result.paused_at or ""
        hint = Hint("decide", run_id, gate)
        asks = _gate_question(graph, state, gate)
        print(f"Paused at gate {gate!r}: {asks}\n{next_block(hint)}", file=out)
    elif result.reason == "limit":
        hint = Hint("resume", run_id)
        wait = state["legs"][-1].get("wait")
        said = describe_wait(wait) if wait is not None else result.detail
        block = next_block(hint)
        print(
            f"run {run_id!r} {said}.\nNothing failed; once the limit has reset: {block}", file=out
        )
    elif result.reason == "spend_cap":
        capped = state["legs"][-1].get("capped")
        said = describe_cap(capped) if capped is not None else result.detail
        step = "approve_spend"
        print(
            f"run {run_id!r} {said}.\nNothing failed; here, approve more spend with:\n"
            f"  omg resume {run_id} --approve-spend USD",
            file=out,
        )
    else:
        hint = Hint("resume", run_id)
        block = next_block(hint)
        print(f"run {run_id!r} paused for its leg budget ({result.detail}). {block}", file=out)
    return exits.BY_OUTCOME[result.outcome], hint, step


def _standing(state: State) -> Hint | None:
    """What a run no leg could advance needs next (the outcome line's ``next``)."""
    rid, gate = state["run_id"], state["paused_at"]
    if state["status"] == "failed":
        return Hint("retry_failed", rid)
    if state["status"] == "paused":
        return Hint("decide", rid, gate) if gate else Hint("resume", rid)
    return None


def _gate_question(graph: Graph, state: State, gate: str) -> str:
    """What the gate asks: its description, or an exhausted loop's last verdict."""
    if gate in graph.by_id:
        return graph.node(gate).description or "(no description)"
    declarer = gate.removesuffix(EXHAUSTED_GATE_SUFFIX)
    detail = state["nodes"].get(declarer, NO_RECORD).get("detail", "")
    return f"accept {declarer!r} as it is? {detail}".strip()
