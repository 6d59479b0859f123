"""A ``pull_request`` event, planned — pure: start or continue the run of the PR's head, judged
by the graph of the branch it targets; a new head supersedes the previous head's run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from omg.ci.actions import Action, Leg, NotRun, Resume, Skip, Start, Supersede
from omg.errors import StateError
from omg.github.event import PR_ACTIONS, PullRequest
from omg.state import State
from omg.state.runid import pr_run_id

if TYPE_CHECKING:
    from omg.ci.facts import Facts
    from omg.leg.run import Run

#: One try at superseding a run: it is settled already (nothing to do), a leg may be running
#: it (a note it folds in at its end), or it is at rest (recorded on its branch at once).
Superseding = Literal["settled", "note", "on_branch"]


def plan(t: PullRequest, facts: Facts) -> Action:
    """What pull request event ``t`` asks of omg."""
    if t.action not in PR_ACTIONS:
        return Skip(f"pull_request {t.action}: omg runs on {', '.join(PR_ACTIONS)}")
    if t.fork:
        return Skip(
            f"PR #{t.number} comes from a fork: its workflow token is read-only and "
            "secrets are withheld, so omg cannot record or push a run for it here. To review "
            "it, a person with write access can comment `/omg review` on the pull request "
            f"(`/omg review @{t.head_sha}` binds it to this head): the comment's workflow runs "
            "the graph of the base branch on the fork's head, and each later leg waits for "
            "such a command again",
            quiet=False,
        )
    if t.draft and t.action != "ready_for_review":
        return Skip(f"PR #{t.number} is a draft; omg starts when it is ready for review")
    rules = facts.pr_graph(t)  # the base's graph judges the PR; its own change is reported
    if rules.graph is None:
        return NotRun(t.number, rules)
    graph, given = rules.graph, facts.args.run_id
    rid = given or pr_run_id(t.number, graph.name, t.head_sha)
    start = Start(graph, rules.source, rid, rules.record(), sha256=rules.sha256)
    leg = Leg(rid, t.head_sha, start)
    if t.before and t.before != t.head_sha and not given:
        return Supersede(pr_run_id(t.number, graph.name, t.before), t.head_sha, leg)
    return leg


def next_leg(leg: Leg, run: Run | None) -> Start | Resume:
    """The head's leg: its run resumed when the remote has it (``run``), else started; a run
    that judges another head is refused (a --run-id given to every head)."""
    if run is None:
        return leg.start
    judged = run.state.get("pull_request", {}).get("head_sha")
    if judged and judged != leg.head:
        raise StateError(
            f"run {leg.run_id!r} judges head {judged[:12]}, but PR #{leg.start.number} is at "
            f"{leg.head[:12]}; leave --run-id unset so each head gets its own run"
        )
    return Resume(leg.run_id, leg.start.number)


def superseding(state: State) -> Superseding:
    """How run ``state`` of an earlier head is superseded now."""
    if state["status"] in ("passed", "failed", "superseded"):
        return "settled"
    if state["legs"] and state["legs"][-1]["outcome"] is None:
        return "note"  # a leg may be running it
    return "on_branch"
