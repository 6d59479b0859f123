"""Admission of a `/omg` command on a run, as a table: who may, a leg running elsewhere, the
gate it answers, a decision on record, and the state ref it was written against."""

from __future__ import annotations

import pytest

from omg.github.command import Command
from omg.leg.admit import Admission, Admit, AlreadyApplied, Refuse, admit
from omg.leg.decisions import Decision
from omg.state import State
from omg.state.fold import empty_state

RID = "pr-7-g-abc1234"


def run(paused: str | None = None, **gates: tuple[str, str, str]) -> State:
    st = empty_state()
    st["run_id"] = RID
    st["paused_at"] = paused
    for gate, (decision, by, reason) in gates.items():
        st["gates"][gate] = {
            "decision": decision,  # type: ignore[typeddict-item]
            "by": by,
            "reason": reason,
            "at": "2026-01-01T00:00:00Z",
            "state_ref": "abc",
        }
    return st


APPROVE = Command("approve", gate="review", text="/omg approve review")
REJECT = Command("reject", gate="review", reason="no", text="/omg reject review no")
BOUND = Command("approve", gate="review", ref="s1", text="/omg approve review@s1")
RETRY = Command("retry", text="/omg retry")
SPEND = Command("approve-spend", text="/omg approve-spend 5", amount=5.0)
AT_A_GATE = "paused at gate review, not at a spend cap, so more spend changes nothing"
BUSY = "run is running leg 2"
REFS = {"s1": (RID, 5), "s0": (RID, 3), "other": ("pr-8-g-def5678", 9)}

ON_RECORD = run(None, review=("approve", "ann", ""))
BY_BOB = run(None, review=("approve", "bob", ""))
ASKS_AGAIN = run("review", review=("approve", "ann", ""))
YES = Admit(Decision("review", True, "ann"))
NO = Admit(Decision("review", False, "ann", "no"))

CASES: list[tuple[str, State, Command, str | None, str, Admission | str]] = [
    ("approve the paused gate", run("review"), APPROVE, None, "", YES),
    ("reject with a reason", run("review"), REJECT, None, "", NO),
    ("retry a run", run(), RETRY, None, "", Admit(None)),
    ("a stranger is refused", run("review"), APPROVE, "ann may not", "", Refuse("ann may not")),
    ("a stranger is refused though on record", ON_RECORD, APPROVE, "no", "", Refuse("no")),
    ("a leg elsewhere refuses a decision", run("review"), APPROVE, None, BUSY, Refuse(BUSY)),
    ("a leg elsewhere refuses a retry", run(), RETRY, None, BUSY, Refuse(BUSY)),
    ("on record: a re-run of the job", ON_RECORD, APPROVE, None, "", AlreadyApplied(busy=False)),
    ("on record, a leg carries it on", ON_RECORD, APPROVE, None, BUSY, AlreadyApplied(busy=True)),
    ("decided by another already", BY_BOB, APPROVE, None, "", "was already decided"),
    ("a gate asking again takes it anew", ASKS_AGAIN, APPROVE, None, "", YES),
    ("not paused", run(), APPROVE, None, "", "is not paused at a gate"),
    ("another gate", run("deploy"), APPROVE, None, "", "is paused at 'deploy'"),
    ("a retry is never on record", ON_RECORD, RETRY, None, "", Admit(None)),
    ("more spend for a run at rest", run(), SPEND, None, "", Admit(None)),
    ("more spend for a run at a gate changes nothing", run("review"), SPEND, None, "", AT_A_GATE),
    ("it names the command that would", run("review"), SPEND, None, "", "/omg approve review"),
    ("a stranger's spend is refused for who", run("review"), SPEND, "no", "", Refuse("no")),
]


@pytest.mark.parametrize(
    ("state", "cmd", "refused", "busy", "want"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_a_command_is_admitted_refused_or_on_record(
    state: State, cmd: Command, refused: str | None, busy: str, want: Admission | str
) -> None:
    asked: list[str] = []

    def state_at(ref: str) -> tuple[str, int] | None:
        asked.append(ref)
        return REFS.get(ref)

    got = admit(
        state, cmd, "ann", refused=refused, busy=busy, state_at=state_at, progress=lambda: 5
    )
    if isinstance(want, str):
        assert isinstance(got, Refuse) and want in got.why, got
    else:
        assert got == want
    assert asked == [], "a command bound to no state ref looks none up"


@pytest.mark.parametrize(
    ("ref", "progress", "want"),
    [
        ("s1", 5, None),  # written against the state the run is in
        ("s1", 4, None),  # a standing note since does not make it stale
        ("s0", 5, "is a stale state of run"),
        ("other", 5, "is not a state of run"),
        ("nowhere", 5, "is not a state of run"),
    ],
)
def test_a_command_bound_to_a_state_is_refused_once_the_run_moved_on(
    ref: str, progress: int, want: str | None
) -> None:
    cmd = Command("approve", gate="review", ref=ref, text=f"/omg approve review@{ref}")
    got = admit(
        run("review"), cmd, "ann", refused=None, busy="",
        state_at=REFS.get, progress=lambda: progress,
    )  # fmt: skip
    if want is None:
        assert got == Admit(Decision("review", True, "ann"))
    else:
        assert isinstance(got, Refuse) and want in got.why and ref in got.why


def test_the_state_ref_is_looked_up_only_after_every_other_check_passed() -> None:
    def state_at(ref: str) -> tuple[str, int] | None:
        raise AssertionError(f"looked up {ref}")

    for state, busy in ((run("deploy"), ""), (run("review"), BUSY)):
        got = admit(state, BOUND, "ann", refused=None, busy=busy, state_at=state_at, progress=int)
        assert isinstance(got, Refuse)
