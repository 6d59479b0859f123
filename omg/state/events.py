"""Events: the closed set of kinds and the typed fields an event may carry (event.schema.json).

``Recorder.emit(kind, **fields)`` is typed by ``EventFields``: a misspelt field, a cause outside
the closed set or a wrong value type is a mypy error at the call site, not a schema failure
found later in events.jsonl. A field given as None is left out of the line.
"""

from __future__ import annotations

from typing import Literal, Required, get_args

from omg.graphdata import GraphData
from omg.kinds import Cause, LimitKind, Outcome, Provenance
from omg.records import (
    ArtifactRecord,
    CappedRecord,
    CiRun,
    Fanout,
    PullRequestRecord,
    WaitRecord,
)
from omg.spend import ProxyRecord, SpendFields

EventKind = Literal[
    "run_started",
    "node_started",
    "node_retried",
    "node_passed",
    "node_failed",
    "gate_paused",
    "gate_approved",
    "gate_rejected",
    "run_finished",
    "run_superseded",
    "decision_refused",
    "leg_dispatched",
]
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)


class EventFields(SpendFields, total=False):
    """Every field an event may carry beside its envelope (schema, seq, ts, run_id, leg, event);
    an execution's spend (cost_usd, cost_unknown, usage, session_cost_usd) is ``SpendFields``."""

    node_id: str
    round: int | None
    session_id: str | None
    permission_denials: list[str] | None  # node_passed/node_failed: tools the agent was refused
    cli_version: str | None  # the agent CLI's version
    api_retries: int | None  # how often the CLI retried the API in that execution
    proxy: ProxyRecord | None  # what omg's model proxy saw of that execution
    duration_s: float
    retries: int | None
    detail: str | None
    verdict: Literal["PASS", "FAIL"]
    provenance: Provenance | None
    cause: Cause | None
    judged: bool
    reason: str | None
    declarer: str | None
    description: str | None
    by: str
    graph: GraphData
    graph_source: str
    graph_sha256: str
    inputs: dict[str, str]
    retry_failed: bool
    rearm: list[str]
    forget_gates: list[str]
    hops_reset: bool
    guidance: str  # run_started (--retry-failed): a person's words, {{ guidance }}
    guidance_by: str  # who gave them
    lane_trees: dict[str, str]  # node_retried (feedback): lane → tree when the round began
    output: object  # a structured reply (output_schema), as validated
    outcome: Outcome
    paused_at: str | None
    base: str
    state_ref: str
    worktree: str  # a settled node's lane, its branch and head: restored exactly from them
    worktree_branch: str
    worktree_commit: str
    artifact: ArtifactRecord | None  # node_passed: its reply file as written (size, sha256)
    pull_request: PullRequestRecord  # run_started (leg 1) on a pull request: the head it judges
    ci: CiRun  # run_started: the GitHub Actions run carrying the leg
    fanout: Fanout  # run_started of a fold: the wave it took in
    rehearsal: bool  # run_started (leg 1): agent nodes answered by the stub model
    head_sha: str  # run_superseded: the newer head
    command: str  # decision_refused: the command as written
    workflow_run_id: str  # leg_dispatched: GitHub's run of the next leg
    url: str
    note: str  # noted off the run branch first: the note's id (refs/omg/notes/<run>/<id>)
    limit: LimitKind  # node_retried (reason limit): the provider's limit that stopped it
    resets: str | None  # node_retried (reason limit): the reset, in the provider's words
    wait: WaitRecord | None  # run_finished (reason limit): the wait, and the earliest retry
    caps: list[CappedRecord] | None  # run_finished: each spend cap and its scope's spend
    capped: CappedRecord | None  # run_finished (reason spend_cap): the cap reached
    approved_usd: float  # run_started: spend a writer approved beyond the caps


class EventRecord(EventFields, total=False):
    """One events.jsonl line as read back or emitted: its envelope and its fields."""

    schema: Required[int]
    seq: Required[int]
    ts: Required[str]
    run_id: Required[str]
    leg: Required[int]
    event: Required[EventKind]


#: One events.jsonl line, as everything past the JSON parse reads it.
Event = EventRecord
