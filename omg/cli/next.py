"""What to do next: the one table that words every next step omg suggests."""

from __future__ import annotations

from omg.errors import Hint
from omg.kinds import EXHAUSTED_GATE_SUFFIX


def steps(hint: Hint) -> tuple[str, list[str]]:
    """(what to do, the commands that do it) for a run in the situation ``hint`` names."""
    rid, gate = hint.run_id, hint.gate or "GATE"
    if hint.step == "decide":
        out = [
            f"omg resume {rid} --approve {gate}",
            f"omg resume {rid} --reject {gate} --reason TEXT",
        ]
        if gate.endswith(EXHAUSTED_GATE_SUFFIX):  # or fresh rounds, with a person's words
            out.append(f"omg resume {rid} --retry-failed --guidance TEXT")
        return "decide it with", out
    if hint.step == "retry_failed":
        return "re-run the failed nodes with", [f"omg resume {rid} --retry-failed"]
    if hint.step == "resume":
        return "continue with", [f"omg resume {rid}"]
    if hint.step == "wait":
        return "a leg is in flight; wait for it", []
    return "see where it stands with", [f"omg status {rid}"]


def next_step(hint: Hint) -> str:
    """The next step as one sentence: ``decide it with `…` or `…```."""
    lead, commands = steps(hint)
    return " ".join([lead, " or ".join(f"`{c}`" for c in commands)]).strip()


def next_block(hint: Hint) -> str:
    """The next step as a heading and one indented command a line, for the end of a leg."""
    lead, commands = steps(hint)
    return lead[0].upper() + lead[1:] + ":" + "".join(f"\n  {c}" for c in commands)
