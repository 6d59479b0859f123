"""Admission: whether a `/omg` comment's command may act on a run now — pure, on its state.

The job asks once per try (a try lost to another leg reads the run again and asks again):
the command is refused (who wrote it, a leg running elsewhere, a gate it does not answer, a
state it was not written against, more spend for a run that waits at a gate), is already
on record (a re-run of the job that recorded it), or is admitted: the leg retries, or
decides the gate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from omg.errors import StateError
from omg.github.command import Command
from omg.leg.decisions import Decision, check
from omg.state import State


@dataclass(frozen=True)
class Admit:
    """The command acts: a retry, or ``decision`` (None for a retry) on the paused gate."""

    decision: Decision | None


@dataclass(frozen=True)
class AlreadyApplied:
    """This very decision is on record; ``busy``: a leg elsewhere carries the run on."""

    busy: bool


@dataclass(frozen=True)
class Refuse:
    """The command changes nothing but the record of its refusal, for ``why``."""

    why: str


Admission = Admit | AlreadyApplied | Refuse


def decision_of(cmd: Command, login: str) -> Decision:
    """The gate decision an approve or reject command asks for."""
    return Decision(cmd.gate, cmd.verb == "approve", login, cmd.reason)


def applied(state: State, cmd: Command, login: str) -> bool:
    """This very decision is on record (a re-run of the job that recorded it)."""
    got = state["gates"].get(cmd.gate)
    want = "approve" if cmd.verb == "approve" else "reject"
    return (
        got is not None
        and got["decision"] == want
        and got["by"] == login
        and got["reason"] == cmd.reason
        and state["paused_at"] != cmd.gate
    )


def admit(
    state: State,
    cmd: Command,
    login: str,
    *,
    refused: str | None,
    busy: str,
    state_at: Callable[[str], tuple[str, int] | None],
    progress: Callable[[], int],
) -> Admission:
    """What ``cmd`` by ``login`` does to the run in ``state``.

    ``refused``: why ``login`` may not decide (None when they may); ``busy``: why no leg may
    start now ('' when none runs elsewhere); ``state_at(ref)``: the run id and seq a state ref
    names (None for none of omg's), and ``progress()`` the seq of the run's last move — asked
    only for a command bound to a state ref that reached that check.
    """
    retry = cmd.verb == "retry"
    on_record = cmd.verb not in ("retry", "approve-spend") and applied(state, cmd, login)
    if refused is not None:
        return Refuse(refused)
    if on_record:
        return AlreadyApplied(busy=bool(busy))
    if busy:
        return Refuse(busy)
    gate = state["paused_at"]
    if cmd.verb == "approve-spend" and gate:
        return Refuse(
            f"run {state['run_id']} is paused at gate {gate}, not at a spend cap, so more "
            f"spend changes nothing; to let it go on, decide the gate: /omg approve {gate} "
            f"(or /omg reject {gate} <reason>)"
        )
    if retry or cmd.verb == "approve-spend":
        return Admit(None)
    decision = decision_of(cmd, login)
    try:
        check(state, decision)
    except StateError as exc:
        return Refuse(str(exc))
    if cmd.ref:
        rid = state["run_id"]
        judged = state_at(cmd.ref)
        if judged is None or judged[0] != rid:
            return Refuse(
                f"@{cmd.ref} is not a state of run {rid}; copy the command from the omg comment"
            )
        if judged[1] < progress():
            return Refuse(
                f"@{cmd.ref} is a stale state of run {rid}: the run has moved on since; "
                "decide again with the command in the updated omg comment"
            )
    return Admit(decision)
