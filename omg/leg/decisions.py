"""Gate decisions: checked against the pause they answer, recorded, and delivered as a verdict."""

from __future__ import annotations

from dataclasses import dataclass

from omg.errors import Hint, StateError
from omg.graph.model import Graph
from omg.kinds import EXHAUSTED_GATE_SUFFIX
from omg.records import ArtifactRecord
from omg.state import NO_RECORD, State
from omg.state.artifacts import digest
from omg.state.events import EventKind
from omg.state.recorder import Recorder
from omg.words import undecodable, visible


@dataclass(frozen=True)
class Decision:
    """A human's decision on a gate: which, approve or reject, who, and why."""

    gate: str
    approve: bool
    by: str
    reason: str = ""


#: The most characters of guidance a person may give (a prompt's worth, not a document).
GUIDANCE_LIMIT = 8000


@dataclass(frozen=True)
class Guidance:
    """A person's words for the nodes ``--retry-failed`` re-arms (``{{ guidance }}``), and who
    gave them."""

    text: str
    by: str

    def problem(self) -> str:
        """Why these words cannot be given ("" when they can)."""
        bad = undecodable(self.text)
        if bad:
            return f"the guidance is not valid UTF-8 ({bad}); give it as UTF-8 text"
        if not visible(self.text):
            return "the guidance is empty; say what the re-run nodes should do differently"
        if "\0" in self.text:
            return "the guidance holds a NUL byte, which no prompt or command can carry"
        if len(self.text) > GUIDANCE_LIMIT:
            return (
                f"the guidance is {len(self.text):,} characters, more than the "
                f"{GUIDANCE_LIMIT:,} omg takes; say it shorter"
            )
        return ""


def check(state: State, d: Decision) -> None:
    """Refuse a decision that answers no pause, or a gate already decided."""
    paused = state["paused_at"]
    # A gate that asks again (an exhausted loop re-armed by --retry-failed ran out once more)
    # takes a new decision; any other gate with a recorded decision is never re-asked.
    if d.gate in state["gates"] and d.gate != paused:
        raise StateError(
            f"gate {d.gate!r} was already decided ({state['gates'][d.gate]['decision']}"
            f" by {state['gates'][d.gate]['by']}); a recorded decision is never re-asked"
        )
    if paused is None:
        raise StateError(
            f"run {state['run_id']!r} is not paused at a gate, so there is nothing to "
            f"{'approve' if d.approve else 'reject'} (a failed run is retried with "
            "--retry-failed)"
        )
    if d.gate != paused:
        raise StateError(
            f"you named gate {d.gate!r} but run {state['run_id']!r} is paused at "
            f"{paused!r}; resume with --approve {paused} or --reject {paused}"
        )


def refuse_paused(state: State) -> StateError:
    """The refusal of a plain resume of a run that waits for a decision."""
    gate = str(state["paused_at"])
    return StateError(
        f"run {state['run_id']!r} is paused at gate {gate!r}",
        hint=Hint("decide", state["run_id"], gate),
    )


def record(rec: Recorder, graph: Graph, d: Decision, ref: str) -> None:
    """Record the decision (who, why, the state it judged), then deliver its verdict."""
    kind: EventKind = "gate_approved" if d.approve else "gate_rejected"
    rec.emit(kind, node_id=d.gate, by=d.by, reason=d.reason or None, state_ref=ref, hops_reset=True)
    deliver(rec, graph, d)


def deliver(rec: Recorder, graph: Graph, d: Decision) -> None:
    """The verdict a decision gives: the gate (or an exhausted loop's declarer) passes or fails."""
    target = d.gate
    rnd = 0
    if d.gate.endswith(EXHAUSTED_GATE_SUFFIX) and d.gate not in graph.by_id:
        target = d.gate[: -len(EXHAUSTED_GATE_SUFFIX)]
        rnd = int(rec.state["nodes"].get(target, NO_RECORD).get("round", 0))
    why = f": {d.reason}" if d.reason else ""
    artifact: ArtifactRecord | None = None  # a gate has no reply; an accepted loop's is kept
    if d.approve and target != d.gate:
        # Accepting an exhausted loop's work as it stands: its last reply becomes the artifact,
        # so dependants can use {{ artifacts.<declarer> }} like any passed node's.
        rd = rec.rundir
        last = rd.failed(target)
        reply = last.read_text(encoding="utf-8") if last.exists() else ""
        artifact = digest(rd.write_payload(rd.artifact(target), reply))
        rd.remove_payload(last)
    if d.approve:
        rec.emit(
            "node_passed",
            node_id=target,
            verdict="PASS",
            provenance="approved",
            round=rnd or None,
            cost_usd=0.0,
            detail=f"gate approved by {d.by}{why}",
            artifact=artifact,
        )
    else:
        rec.emit(
            "node_failed",
            node_id=target,
            verdict="FAIL",
            round=rnd or None,
            cost_usd=0.0,
            judged=False,
            detail=f"gate rejected by {d.by}{why}",
        )


def undelivered(graph: Graph, state: State) -> list[Decision]:
    """Decisions on record whose verdict never landed: a leg killed between the two events."""
    out = []
    for gate, dec in state["gates"].items():
        if gate in graph.by_id:
            pending = state["nodes"].get(gate, NO_RECORD).get("verdict", "") == ""
        else:  # an exhausted loop's gate: its declarer still waits there
            declarer = gate[: -len(EXHAUSTED_GATE_SUFFIX)]
            pending = state["nodes"].get(declarer, NO_RECORD).get("awaiting") == gate
        if pending:
            out.append(Decision(gate, dec["decision"] == "approve", dec["by"], dec["reason"]))
    return out
