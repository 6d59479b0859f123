"""A `/omg` comment on a pull request, planned — pure: what it asks (`github/command` parsed
it), whether its author may, and what it does to the run as it stands.

``plan`` reads the comment: not a command (skipped), a malformed one (answered), a command for
a run the remote lacks (answered), ``status`` (reported), or a command that may change the run
(``Apply``). ``decide`` judges that command on the run as it stands, once per try — `ci/act`
asks again when another leg moved the run first. Admission (``admit``) is the core of it: the
command is refused (who wrote it, a leg running elsewhere, a gate it does not answer, a state
it was not written against, more spend for a run that waits at a gate), is already on record
(a re-run of the job that recorded it), or is admitted: the leg retries, or decides the gate.
``review`` plans `/omg review`: a writer's run of the graph on the pull request's head, a fork's
included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from omg.ci import actions
from omg.errors import StateError
from omg.github.access import MAY_WRITE
from omg.github.command import Command, Malformed, parse
from omg.github.event import Comment, PullRequest
from omg.github.markdown import code
from omg.leg.decisions import Decision, Guidance, check
from omg.state import State
from omg.state.runid import pr_run_id

if TYPE_CHECKING:
    from omg.ci.facts import Facts


@dataclass(frozen=True)
class Admit:
    """The command acts: a retry, or ``decision`` (None for a retry) on the paused gate."""

    decision: Decision | None


@dataclass(frozen=True)
class AlreadyApplied:
    """This very decision is on record; ``busy``: a leg elsewhere carries the run on."""

    busy: bool


@dataclass(frozen=True)
class Refused:
    """The command changes nothing but the record of its refusal, for ``why``."""

    why: str


Admission = Admit | AlreadyApplied | Refused


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
    retry = cmd.verb in ("retry", "review")  # a review continues a run that waits for a leg
    on_record = cmd.verb not in ("retry", "approve-spend", "review") and applied(state, cmd, login)
    if refused is not None:
        return Refused(refused)
    if on_record:
        return AlreadyApplied(busy=bool(busy))
    if busy:
        return Refused(busy)
    gate = state["paused_at"]
    if cmd.verb == "approve-spend" and gate:
        return Refused(
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
        return Refused(str(exc))
    if cmd.ref:
        rid = state["run_id"]
        judged = state_at(cmd.ref)
        if judged is None or judged[0] != rid:
            return Refused(
                f"@{cmd.ref} is not a state of run {rid}; copy the command from the omg comment"
            )
        if judged[1] < progress():
            return Refused(
                f"@{cmd.ref} is a stale state of run {rid}: the run has moved on since; "
                "decide again with the command in the updated omg comment"
            )
    return Admit(decision)


def plan(t: Comment, facts: Facts) -> actions.Action:
    """What comment ``t`` asks of omg, before any run is judged."""
    cmd = parse(t.body) if t.action == "created" and t.on_pull_request else None
    if cmd is None:
        return actions.Skip("the comment is not an omg command", quiet=True)
    # one who may not decide is answered sparingly
    to = actions.To(t.number, t.comment_id, t.login, t.bot or t.association not in MAY_WRITE)
    if isinstance(cmd, Malformed):
        problem = actions.Skip(f"comment {t.comment_id}: {cmd.problem}", quiet=False)
        return actions.Reply(to, f"{cmd.problem}.", problem)
    if cmd.verb == "review":
        return review(t, cmd, to, facts)
    graph, _ = facts.graph()
    head = facts.pr_head(t.number)
    rid = pr_run_id(t.number, graph.name, head)
    if not facts.found(rid):
        return actions.Reply(
            to,
            f"there is no omg run of {code(graph.name)} for head {code(head[:7])}"
            " yet; it starts with the next push or reopen of the PR, or when a person with "
            f"write access comments {code('/omg review')}.",
            actions.Skip(f"no run {rid!r} on {facts.args.push}", quiet=False),
        )
    if cmd.verb == "status":
        return actions.ReportOnly(rid, t.number, to=to)
    state = facts.run(rid).state
    why = facts.refusal(t.login, bot=t.bot, association=t.association, state=state)
    return actions.Apply(rid, replace(to, quiet=to.quiet or why is not None), cmd, why)


def decide(
    a: actions.Apply,
    state: State,
    *,
    carrier: str,
    state_at: Callable[[str], tuple[str, int] | None],
    progress: Callable[[], int],
    recorded: Callable[[str], bool],
) -> actions.Action:
    """What command ``a`` does to the run in ``state``: one try. ``carrier``: the workflow run
    carrying the run's open last leg, when not this job's ('' when none); ``state_at`` and
    ``progress`` as for ``admit``; ``recorded(command)``: whether a ``run_started`` of the
    record holds ``command`` (a re-run of the job that approved the spend)."""
    cmd, login, rid = a.command, a.to.login, a.run_id
    verdict = admit(
        state,
        cmd,
        login,
        refused=a.refused,
        busy=busy(state, carrier),
        state_at=state_at,
        progress=progress,
    )
    if isinstance(verdict, Refused):
        return actions.Refuse(rid, a.to, cmd, verdict.why)
    unfit = Guidance(cmd.guidance, login).problem() if cmd.guidance else ""
    if unfit:  # words no node may be given: answered, and nothing runs
        return actions.Refuse(rid, a.to, cmd, unfit)
    if isinstance(verdict, AlreadyApplied) and verdict.busy:
        # on record, and a leg carries it on: that leg is left alone
        note = f"{cmd.text!r} is on record and a leg of run {rid} is running"
        return actions.ReportOnly(rid, a.to.number, note=note)
    if cmd.verb == "approve-spend":
        written = f"{cmd.text} (comment {a.to.comment_id})"
        if recorded(written):  # a re-run of the job that recorded it: never approved twice
            return actions.ReportOnly(rid, a.to.number, note=f"{cmd.text!r} is on record")
        return actions.ApproveSpend(rid, a.to.number, cmd.amount, login, written)
    if isinstance(verdict, AlreadyApplied):
        return actions.Resume(rid, a.to.number, quiet_if_paused=True)
    if cmd.verb == "review":  # the run's next leg, on a writer's word
        return actions.Resume(rid, a.to.number, contest=True)
    if verdict.decision is None:
        words = Guidance(cmd.guidance, login) if cmd.guidance else None
        return actions.Resume(rid, a.to.number, retry=True, guidance=words, contest=True)
    return actions.Resume(rid, a.to.number, decision=verdict.decision, contest=True)


def busy(state: State, carrier: str) -> str:
    """Why no comment may start a leg of the run now — its last leg is open, carried by
    ``carrier`` (another workflow run, which may be running it this very moment) — or ''."""
    if not carrier:
        return ""
    return (
        f"run {state['run_id']} is running leg {state['legs'][-1]['leg']} ({carrier}); comment "
        "once the omg comment asks for a decision (if that leg was cut short, re-run its job to "
        "continue the run)"
    )


def kept_moving(a: actions.Apply) -> actions.ReportOnly:
    """What is said when every try lost its race: the command was not applied."""
    note = f"run {a.run_id} kept moving; {a.command.text!r} was not applied, comment again"
    return actions.ReportOnly(a.run_id, a.to.number, note=note)


def review(t: Comment, cmd: Command, to: actions.To, facts: Facts) -> actions.Action:
    """What ``/omg review`` by ``t``'s author asks of omg: a writer's command to run the graph
    on the pull request's current head, a fork's included (whose own event cannot write).

    The pull request is read through the API (its head, its base, fork or not), never from
    the comment; a closed one is not run, nor a head other than the one ``@<sha>`` binds the
    command to (a push between the comment and its job); the base's graph judges it, as for a
    `pull_request` leg. A head without a run
    gets one, and the runs of the PR's earlier heads are superseded (a fork's push could not
    say so itself); a head whose run waits for its next leg is continued; any other is
    reported, as `/omg status` reports it. Who has no write access is refused, sparingly."""
    why = facts.writer(t.login, bot=t.bot, association=t.association)
    if why is not None:
        refused = actions.Skip(f"{cmd.text!r} from {t.login} refused: {why}", quiet=False)
        said = f"omg refused {code(cmd.text)}: {code(why)}; nothing runs."
        return actions.Reply(replace(to, quiet=True), said, refused)
    pull = facts.pull(t.number)
    head = pull.head_sha
    moved = bool(cmd.ref) and not head.lower().startswith(cmd.ref)
    if pull.state != "open" or moved:
        said = (
            f"the pull request's head is {code(head[:12])} now, not {code('@' + cmd.ref)}: it "
            f"moved since; look at the new head, then comment {code('/omg review @' + head)}"
            if moved
            else f"PR #{t.number} is {pull.state}; a review runs on an open pull request"
        )
        skipped = actions.Skip(f"{cmd.text!r}: {said}", quiet=False)
        return actions.Reply(
            to, f"omg did not run {code(cmd.text)}: {said}; nothing runs.", skipped
        )
    event = PullRequest(
        "review", t.number, pull.head_sha, pull.head_ref, "", pull.fork, False,
        facts.default_branch, pull.base_sha, pull.base_ref,
    )  # fmt: skip
    rules = facts.pr_graph(event)  # the base's graph judges the PR, as for its own events
    if rules.graph is None:
        return actions.NotRun(t.number, rules)
    graph = rules.graph
    rid = pr_run_id(t.number, graph.name, head)
    if facts.found(rid):
        state = facts.run(rid).state
        if waits_for_a_leg(state):
            return actions.Apply(rid, to, cmd, None)
        note = (
            f"run {rid} judges head {head[:7]} already; /omg review reports it as /omg status "
            "does (a new head gets a run of its own)"
        )
        return actions.ReportOnly(rid, t.number, to=to, note=note)
    record = rules.record()
    if pull.fork:
        record["fork"] = True  # no leg of it dispatches the next: a writer's command does
    then: actions.Action = actions.Start(graph, rules.source, rid, record, sha256=rules.sha256)
    for earlier in facts.pr_runs(t.number, graph.name):
        if earlier != rid:
            then = actions.Supersede(earlier, head, then)
    return then


def waits_for_a_leg(state: State) -> bool:
    """Run ``state`` stopped with work left and waits for nothing but a leg: its time ran out,
    or a provider's limit stopped it (not a gate, nor a spend cap, which need their own
    command)."""
    last = state["legs"][-1] if state["legs"] else None
    return (
        state["status"] == "paused"
        and not state["paused_at"]
        and last is not None
        and last.get("reason") != "spend_cap"
    )
