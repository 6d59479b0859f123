"""A `/omg` comment, planned, as tables: what it asks before any run is judged (and what the
job reads to know), and what each try decides on the run as it stands — admission: who may, a
leg running elsewhere, the gate it answers, a decision on record, and the state ref it was
written against."""

from __future__ import annotations

import pytest

from omg.ci import actions
from omg.ci.actions import Action, Apply, ApproveSpend, Reply, ReportOnly, Resume, Skip, To
from omg.ci.comment import Admission, Admit, AlreadyApplied, admit, decide, kept_moving, plan
from omg.ci.comment import Refused as Refuse
from omg.github.command import Command
from omg.github.event import Comment
from omg.leg.decisions import Decision, Guidance
from omg.state import State
from omg.state.fold import empty_state
from omg.state.runid import pr_run_id

from .table import Table

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


# -- the comment, planned: what it asks before any run is judged, and each try's decision ----

PR_HEAD = "d" * 40
PR_RID = pr_run_id(7, "g", PR_HEAD)


def comment(
    body: str, *, association: str = "MEMBER", bot: bool = False, **kw: object
) -> Comment:
    given = {"action": "created", "number": 7, "on_pull_request": True, "comment_id": 99,
             "body": body, "login": "ann", "association": association, "bot": bot}  # fmt: skip
    return Comment(**{**given, **kw})  # type: ignore[arg-type]


def facts(**kw: object) -> Table:
    return Table(heads={7: PR_HEAD}, runs={PR_RID: run("review")}, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "event",
    [
        comment("looks good"),
        comment("/omg approve review", action="edited"),
        comment("/omg approve review", on_pull_request=False),
    ],
    ids=["not a command", "an edit", "on an issue"],
)
def test_a_comment_that_is_no_command_is_skipped_having_read_nothing(event: Comment) -> None:
    table = facts()
    assert plan(event, table) == Skip("the comment is not an omg command", quiet=True)
    assert table.asked == []


def test_a_malformed_command_is_answered_and_reads_nothing() -> None:
    table = facts()
    got = plan(comment("/omg aprove review"), table)
    assert isinstance(got, Reply) and "is not a command" in got.text
    assert got.to == To(7, 99, "ann", quiet=False) and not got.then.quiet
    assert table.asked == []


def test_a_command_for_a_head_without_a_run_is_answered() -> None:
    table = Table(heads={7: PR_HEAD})
    got = plan(comment("/omg approve review"), table)
    assert isinstance(got, Reply) and "there is no omg run of `g` for head `ddddddd`" in got.text
    assert got.then.why == f"no run {PR_RID!r} on origin"
    assert table.asked == ["graph", "pr_head 7", f"found {PR_RID}"]


def test_status_is_reported_without_asking_who_may_decide() -> None:
    table = facts()
    got = plan(comment("/omg status", association="NONE"), table)
    assert got == ReportOnly(PR_RID, 7, to=To(7, 99, "ann", quiet=True))
    assert not any(q.startswith("refusal") for q in table.asked)


@pytest.mark.parametrize(
    ("association", "bot", "refused", "quiet"),
    [
        ("MEMBER", False, None, False),
        ("CONTRIBUTOR", False, "ann is contributor here", True),
        ("MEMBER", True, "ann is a bot account", True),
        ("MEMBER", False, "ann is not one of this graph's approvers", True),
    ],
    ids=["a writer", "a contributor", "a bot", "not an approver"],
)
def test_a_command_that_may_change_the_run_is_applied_and_who_may_not_is_answered_sparingly(
    association: str, bot: bool, refused: str | None, quiet: bool
) -> None:
    table = facts(refused=refused)
    got = plan(comment("/omg approve review", association=association, bot=bot), table)
    assert got == Apply(PR_RID, To(7, 99, "ann", quiet), APPROVE, refused)
    assert table.asked == ["graph", "pr_head 7", f"found {PR_RID}", f"run {PR_RID}", "refusal ann"]


def applying(cmd: Command, refused: str | None = None) -> Apply:
    return Apply(RID, To(7, 99, "ann"), cmd, refused)


def decided(
    a: Apply, state: State, *, carrier: str = "", on_record: bool = False
) -> Action:
    return decide(
        a, state, carrier=carrier, state_at=REFS.get, progress=lambda: 5,
        recorded=lambda command: on_record,
    )  # fmt: skip


def carried(state: State) -> State:
    """``state`` with its last leg open: a leg elsewhere may be running it."""
    state["legs"] = [{"leg": 2, "outcome": None}]  # type: ignore[typeddict-item]
    return state


CARRIED = carried(run(None, review=("approve", "ann", "")))
RETRY_WITH = Command("retry", text="/omg retry use v2", guidance="use v2")
UNFIT = Command("retry", text="/omg retry x", guidance="\u200b")
SPENT = "/omg approve-spend 5 (comment 99)"
DECISIONS: list[tuple[str, Apply, State, str, bool, Action | str]] = [
    ("approve", applying(APPROVE), run("review"), "", False,
     Resume(RID, 7, decision=Decision("review", True, "ann"), contest=True)),
    ("retry", applying(RETRY), run(), "", False, Resume(RID, 7, retry=True, contest=True)),
    ("retry with guidance", applying(RETRY_WITH), run(), "", False,
     Resume(RID, 7, retry=True, guidance=Guidance("use v2", "ann"), contest=True)),
    ("guidance that shows nothing", applying(UNFIT), run(), "", False, "the guidance is empty"),
    ("refused who", applying(APPROVE, "ann may not"), run("review"), "", False, "ann may not"),
    ("a leg running elsewhere", applying(RETRY), carried(run()), "workflow run 5", False,
     "is running leg"),
    ("on record: the job again", applying(APPROVE), ON_RECORD, "", False,
     Resume(RID, 7, quiet_if_paused=True)),
    ("on record, a leg carries it", applying(APPROVE), CARRIED, "workflow run 5", False,
     ReportOnly(RID, 7, note=f"{APPROVE.text!r} is on record and a leg of run {RID} is running")),
    ("more spend", applying(SPEND), run(), "", False, ApproveSpend(RID, 7, 5.0, "ann", SPENT)),
    ("more spend, on record", applying(SPEND), run(), "", True,
     ReportOnly(RID, 7, note=f"{SPEND.text!r} is on record")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("a", "state", "carrier", "on_record", "want"),
    [c[1:] for c in DECISIONS],
    ids=[c[0] for c in DECISIONS],
)
def test_each_try_decides_what_the_command_does_to_the_run_as_it_stands(
    a: Apply, state: State, carrier: str, on_record: bool, want: Action | str
) -> None:
    got = decided(a, state, carrier=carrier, on_record=on_record)
    if isinstance(want, str):
        assert isinstance(got, actions.Refuse) and want in got.why and got.to == a.to, got
    else:
        assert got == want


def test_a_command_that_kept_losing_its_race_says_so() -> None:
    got = kept_moving(applying(APPROVE))
    said = f"run {RID} kept moving; '/omg approve review' was not applied, comment again"
    assert got.note == said
