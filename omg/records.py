"""The records: TypedDicts for state.json, its node, leg and gate records (the schema's shapes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # names for the annotations alone: the records import nothing else of omg
    from omg.graphdata import GraphData
    from omg.kinds import CapScope, Cause, LimitKind, Outcome, Provenance, Ruling, Verdict


class _NodeRequired(TypedDict):
    verdict: Verdict
    round: int
    attempts: int
    cost_usd: float
    cost_unknown: bool


class ArtifactRecord(TypedDict):
    """A passed node's reply file (``artifacts/<id>.out``) as written: its size and SHA-256."""

    bytes: int
    sha256: str


class NodeRecord(_NodeRequired, total=False):
    """One node's record: the latest execution is authoritative, cost accumulates."""

    usage: dict[str, int]
    permission_denials: list[str]  # tool calls the agent was refused, as Tool(input)
    session_cost_usd: float  # the agent session's cumulative cost (what a --resume builds on)
    cli_version: str  # the agent CLI's version that ran it
    session_id: str
    duration_s: float
    detail: str
    provenance: Provenance
    cause: Cause | None
    judged: bool
    awaiting: str
    retries: int
    lane_trees: dict[str, str]  # a declarer's: its re-run path's lane trees when its round began
    artifact: ArtifactRecord  # a passed node's reply file, as its node_passed recorded it
    output: object  # its latest structured reply (output_schema), as its events recorded it


class GraphChangeRecord(TypedDict):
    """A pull request's own change to the graph that judges it: linted and reported, never run
    (the graph of its base judges it; the change applies once merged)."""

    files: list[str]  # what it changes (the graph file, fragments), from the repository's root
    errors: int
    warnings: int
    findings: list[str]  # omg lint's lines for the changed graph (errors, warnings), cut


class _PullRequestRequired(TypedDict):
    number: int
    head_sha: str


class PullRequestRecord(_PullRequestRequired, total=False):
    """The pull request a run judges, the one head commit it judges, and the base commit whose
    graph judges it (a run recorded before omg read it there has no base)."""

    base_ref: str  # the branch the pull request targets
    base_sha: str
    graph_change: GraphChangeRecord  # the PR changes the graph (or its fragments)
    fork: bool  # the head lives in a fork: each leg of the run waits for a writer's command


class CiRun(TypedDict, total=False):
    """The GitHub Actions run that carried a leg."""

    event: str
    workflow_run_id: str
    attempt: int
    actor: str
    workflow: str


class Fanout(TypedDict, total=False):
    """A fold's wave: the matrix entries it took in, those that published nothing (planned
    again) and the records of another wave it dropped."""

    folded: list[str]
    missing: list[str]
    stale: list[str]


class Dispatched(TypedDict, total=False):
    """The next leg a leg dispatched: GitHub's workflow run, when it said which."""

    workflow_run_id: str
    url: str


class WaitRecord(TypedDict):
    """A leg that paused for a provider's limit: the node it stopped, the kind of limit, what
    was said, the reset in the provider's words, and the earliest time a leg tries again."""

    node_id: str
    kind: LimitKind
    said: str
    resets: str
    not_before: str  # ISO 8601 UTC: a conservative bound, never a clock parsed from ``resets``


class CappedRecord(TypedDict):
    """A leg that paused at a spend cap: which cap, its scope's key, the cap and the spend."""

    node_id: str
    scope: CapScope
    key: str  # the UTC day (YYYY-MM-DD) or the pull request's number
    cap_usd: float
    spent_usd: float


class _LegOptional(TypedDict, total=False):
    ci: CiRun
    fanout: Fanout
    dispatched: Dispatched
    wait: WaitRecord  # paused for a provider's limit (reason ``limit``)
    capped: CappedRecord  # paused at a spend cap (reason ``spend_cap``)
    caps: list[CappedRecord]  # each spend cap and its scope's spend when the leg ended


class LegRecord(_LegOptional):
    """One leg (process): when it ran and how it ended (None while open or abandoned)."""

    leg: int
    started: str
    finished: str | None
    outcome: Outcome | None
    reason: str | None


class GateRecord(TypedDict):
    """A recorded gate decision: who, why, when, and the state it judged."""

    decision: Ruling
    by: str
    reason: str
    at: str
    state_ref: str


class LaneRecord(TypedDict):
    """A worktree lane's branch and the head recorded when a node last settled there."""

    branch: str
    commit: str


class _StateOptional(TypedDict, total=False):
    rounds: int  # feedback re-entries over the whole run, never reset (absent before the first)
    pull_request: PullRequestRecord  # a run started on a pull request judges exactly this head
    superseded_by: str  # the newer head whose run took this one's place
    rehearsal: bool  # agent nodes answered by the stub model: costs rehearsed, not spent
    approved_usd: float  # spend writers approved beyond the spend caps (/omg approve-spend)
    guidance: str  # the latest words a person gave the re-armed nodes ({{ guidance }})
    guidance_by: str  # who gave them


class State(_StateOptional):
    """state.json: the fold of events.jsonl (schemas/state.schema.json)."""

    schema: int
    run_id: str
    graph_source: str
    graph_sha256: str
    graph: GraphData
    inputs: dict[str, str]
    nodes: dict[str, NodeRecord]
    gates: dict[str, GateRecord]
    legs: list[LegRecord]
    hops: int
    worktrees: dict[str, LaneRecord]
    paused_at: str | None
    status: str
    cost_usd: float
    seq: int


#: What a node that never ran reads as: pending, nothing spent.
NO_RECORD: NodeRecord = {
    "verdict": "",
    "round": 0,
    "attempts": 0,
    "cost_usd": 0.0,
    "cost_unknown": False,
}
