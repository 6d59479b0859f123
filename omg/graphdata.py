"""The graph data: TypedDicts of a schema-checked graph file, as a run's snapshot keeps it."""

from __future__ import annotations

from typing import Literal, TypedDict

#: A duration as written: seconds, or text such as "90s", "5m".
Duration = int | float | str


class InputSpecData(TypedDict, total=False):
    """One input's declaration in the mapping form of `inputs:`."""

    default: str | int | float
    description: str
    required: bool
    secret: bool


class WorktreeData(TypedDict, total=False):
    """`worktree:` in its mapping form."""

    name: str
    branch: str
    push: bool


class VerifyData(TypedDict, total=False):
    """`success_check.verify:`, a command whose exit and output judge the node."""

    command: str
    cwd: str
    timeout: Duration
    expect_exit: int
    output_matches: str


class SuccessCheckData(TypedDict, total=False):
    """`success_check:`."""

    exit_zero: bool
    result_matches: str
    verify: VerifyData
    output_equals: dict[str, object]


class BackoffData(TypedDict, total=False):
    """`retry.backoff:` in its mapping form."""

    initial: Duration
    factor: int | float
    max: Duration


class RetryData(TypedDict, total=False):
    """`retry:`."""

    max: int
    on: list[str]
    backoff: Duration | BackoffData


class FeedbackData(TypedDict, total=False):
    """`feedback:`, a node's arc back to an earlier one."""

    rerun: str
    max: int
    on_exhausted: Literal["fail", "gate"]
    stop_on_no_progress: bool
    findings: str


class NodeData(TypedDict, total=False):
    """One entry of `nodes:`: an agent, shell or gate node."""

    id: str
    depends_on: list[str]
    type: Literal["gate"]
    description: str
    prompt: str
    runtime: str
    agent: str
    model: str
    allowed_tools: list[str]
    permission_mode: str
    handoff: str
    run: str
    cwd: str
    worktree: str | WorktreeData
    env: list[str] | dict[str, str | None]
    success_check: SuccessCheckData
    retry: RetryData
    feedback: FeedbackData
    timeout: Duration
    budget_usd: int | float
    idle_timeout: Duration
    max_turns: int
    budget_tokens: int
    project_settings: bool
    output_schema: str | dict[str, object]


class GraphData(TypedDict, total=False):
    """A whole graph file, fragments resolved: what `graph_from_data` builds and a run keeps."""

    name: str
    version: str | int
    inputs: list[str] | dict[str, InputSpecData | None]
    concurrency: int
    on_fail: Literal["halt", "continue"]
    budget_usd: int | float
    pr_budget_usd: int | float
    day_budget_usd: int | float
    max_hops: int
    approvers: list[str]
    secrets: list[str]
    prices: dict[str, dict[str, int | float]]
    fragments: str
    resolved_from: dict[str, str]
    nodes: list[NodeData]


class FragmentData(TypedDict, total=False):
    """A fragment file that passed schemas/fragment.schema.json: one node's behaviour, or a
    loop of nodes and its exit."""

    fragment: str
    description: str
    substitutions: list[str]
    node: NodeData
    nodes: list[NodeData]
    exit: str
