"""The graph model: frozen dataclasses built from schema-valid data, and their topology. No I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, get_args

from omg.graph.durations import parse_duration
from omg.graphdata import GraphData
from omg.kinds import Cause
from omg.runtimes import DEFAULT_RUNTIME, Runtime

Kind = Literal["agent", "shell", "gate"]
Handoff = Literal["artifact", "session"]
OnFail = Literal["halt", "continue"]
OnExhausted = Literal["fail", "gate"]
PermissionMode = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"]

PERMISSION_MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)

DEFAULT_TIMEOUT = "20m"
#: An agent that prints nothing and writes nothing to its transcript this long is stuck.
DEFAULT_IDLE_TIMEOUT = "10m"
DEFAULT_VERIFY_TIMEOUT = "2m"
VERIFY_TIMEOUT_CEILING_S = 600.0
DEFAULT_CONCURRENCY = 4
DEFAULT_MAX_HOPS = 64


@dataclass(frozen=True)
class Input:
    """A declared graph input."""

    name: str
    default: str | None = None
    description: str = ""
    required: bool = False
    secret: bool = False  # never recorded, masked wherever omg writes, given again each leg


@dataclass(frozen=True)
class Verify:
    """An evidence command the engine runs and judges."""

    command: str
    cwd: str | None = None
    timeout: str = DEFAULT_VERIFY_TIMEOUT
    expect_exit: int = 0
    output_matches: str | None = None

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)


@dataclass(frozen=True)
class SuccessCheck:
    """Conjunction of predicates judging one attempt; empty means exit 0 is enough."""

    exit_zero: bool = False
    result_matches: str | None = None
    verify: Verify | None = None

    @property
    def is_empty(self) -> bool:
        return not self.exit_zero and self.result_matches is None and self.verify is None

    @property
    def requires_exit_zero(self) -> bool:
        return self.exit_zero or self.is_empty


@dataclass(frozen=True)
class Backoff:
    """Delay between retry attempts: initial, multiplied by factor, capped at max."""

    initial: str = "1s"
    factor: float = 2.0
    max: str = "1m"

    def delay_s(self, retry_number: int) -> float:
        """Seconds to wait before the ``retry_number``-th retry (1-based)."""
        cap = parse_duration(self.max)
        try:
            delay = parse_duration(self.initial) * (self.factor ** (retry_number - 1))
        except OverflowError:  # factor ** n past a float: the cap applies long before
            return cap
        return min(delay, cap)


@dataclass(frozen=True)
class Retry:
    """Extra attempts of one node when its failure cause is listed."""

    max: int = 0
    on: tuple[Cause, ...] = ()
    backoff: Backoff | None = None


@dataclass(frozen=True)
class Feedback:
    """A bounded re-run arc from a declarer back to an ancestor."""

    rerun: str
    max: int
    on_exhausted: OnExhausted = "fail"
    #: a round that changed nothing ends the loop (cause no_progress) instead of another round
    stop_on_no_progress: bool = True


@dataclass(frozen=True)
class Worktree:
    """A managed checkout a node runs in; ``branch`` targets an existing branch."""

    name: str
    branch: str | None = None
    push: bool = False


@dataclass(frozen=True)
class Node:
    """One node of the graph: an agent session, a shell command, or a human gate."""

    id: str
    kind: Kind
    depends_on: tuple[str, ...] = ()
    prompt: str | None = None
    run: str | None = None
    description: str = ""
    runtime: Runtime = DEFAULT_RUNTIME
    agent: str | None = None
    model: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    permission_mode: PermissionMode | None = None
    handoff: Handoff = "artifact"
    cwd: str | None = None
    worktree: Worktree | None = None
    env: tuple[tuple[str, str | None], ...] = ()
    success_check: SuccessCheck = field(default_factory=SuccessCheck)
    retry: Retry = field(default_factory=Retry)
    feedback: Feedback | None = None
    timeout: str = DEFAULT_TIMEOUT
    budget_usd: float | None = None
    idle_timeout: str = DEFAULT_IDLE_TIMEOUT  # agent nodes: killed as stuck after this silence
    max_turns: int | None = None  # agent nodes: claude --max-turns
    budget_tokens: int | None = None  # agent nodes: most tokens one attempt may use
    #: agent nodes: the CLI also loads the checkout's own settings (hooks, MCP servers…)
    project_settings: bool = False

    @property
    def timeout_s(self) -> float:
        return parse_duration(self.timeout)

    @property
    def idle_timeout_s(self) -> float:
        return parse_duration(self.idle_timeout)

    def interpolated_fields(self) -> list[tuple[str, str]]:
        """(field path, text) of every field whose placeholders are resolved at run time."""
        out: list[tuple[str, str]] = []
        for name, text in (("prompt", self.prompt), ("run", self.run), ("cwd", self.cwd)):
            if text is not None:
                out.append((name, text))
        v = self.success_check.verify
        if v is not None:
            out.append(("success_check.verify.command", v.command))
            if v.cwd is not None:
                out.append(("success_check.verify.cwd", v.cwd))
        if self.worktree is not None and self.worktree.branch is not None:
            out.append(("worktree.branch", self.worktree.branch))
        out.extend((f"env.{name}", value) for name, value in self.env if value is not None)
        return out


@dataclass(frozen=True)
class FragmentUse:
    """One `use:` resolved at load: which node, which fragment file, what it became."""

    node: str
    fragment: str
    path: str  # the fragment file, relative to the repository root
    description: str
    spliced: tuple[str, ...]  # the node ids it became
    overridden: tuple[str, ...]  # the fragment's keys the using node replaced
    file: str = ""  # where the use: is written
    line: int | None = None

    def disclosure(self) -> str:
        """``fragment: node "x" uses review (graphs/fragments/review.yaml) — …`` (one line)."""
        keys = ", ".join(self.overridden) or "none"
        made = ", ".join(self.spliced)
        return (
            f'fragment: node "{self.node}" uses {self.fragment} ({self.path}) — '
            f"{self.description.strip()} → nodes {made}; overrides: {keys}"
        )


@dataclass(frozen=True)
class Graph:
    """A whole graph file: fields, nodes in declaration order, and the data it came from."""

    name: str
    nodes: tuple[Node, ...]
    inputs: tuple[Input, ...] = ()
    concurrency: int = DEFAULT_CONCURRENCY
    on_fail: OnFail = "halt"
    budget_usd: float | None = None
    pr_budget_usd: float | None = None  # all runs of one pull request, together
    day_budget_usd: float | None = None  # all runs of the repository in one UTC day
    max_hops: int = DEFAULT_MAX_HOPS
    #: USD per million tokens by model ("input", "cached_input", "output"), for codex
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict, hash=False)
    approvers: tuple[str, ...] = ()  # GitHub logins who alone may decide gates (empty: writers)
    secrets: tuple[str, ...] = ()  # environment variables whose values omg masks
    #: the fragments spliced in when the graph was loaded from its file (none from a snapshot)
    uses: tuple[FragmentUse, ...] = field(default=(), compare=False)
    data: GraphData = field(default_factory=GraphData, compare=False, repr=False)

    # -- lookups ---------------------------------------------------------------
    @cached_property
    def by_id(self) -> dict[str, Node]:
        return {n.id: n for n in self.nodes}

    @cached_property
    def ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes)

    @cached_property
    def index(self) -> dict[str, int]:
        return {nid: i for i, nid in enumerate(self.ids)}

    def node(self, node_id: str) -> Node:
        return self.by_id[node_id]

    @cached_property
    def children(self) -> dict[str, tuple[str, ...]]:
        kids: dict[str, list[str]] = {n.id: [] for n in self.nodes}
        for n in self.nodes:
            for p in n.depends_on:
                if p in kids and n.id not in kids[p]:
                    kids[p].append(n.id)
        return {k: tuple(v) for k, v in kids.items()}

    @cached_property
    def input_names(self) -> frozenset[str]:
        return frozenset(i.name for i in self.inputs)

    @cached_property
    def secret_inputs(self) -> frozenset[str]:
        return frozenset(i.name for i in self.inputs if i.secret)

    # -- topology --------------------------------------------------------------
    def ancestors(self, node_id: str) -> frozenset[str]:
        """Every node reachable backwards along depends_on (excluding node_id itself)."""
        return self._reach(node_id, lambda n: self.by_id[n].depends_on if n in self.by_id else ())

    def descendants(self, node_id: str) -> frozenset[str]:
        """Every node that depends on node_id, directly or transitively."""
        return self._reach(node_id, lambda n: self.children.get(n, ()))

    def _reach(self, start: str, step: Any) -> frozenset[str]:
        seen: set[str] = set()
        stack = list(step(start))
        while stack:
            cur = stack.pop()
            if cur in seen:
                continue
            seen.add(cur)
            stack.extend(step(cur))
        seen.discard(start)
        return frozenset(seen)

    @cached_property
    def topo_order(self) -> tuple[str, ...]:
        """Kahn's order over depends_on, ties broken by declaration order (acyclic graphs)."""
        import heapq

        indeg = {n.id: len(set(p for p in n.depends_on if p in self.by_id)) for n in self.nodes}
        heap = [self.index[i] for i, d in indeg.items() if d == 0]
        heapq.heapify(heap)
        out: list[str] = []
        while heap:
            nid = self.ids[heapq.heappop(heap)]
            out.append(nid)
            for c in self.children[nid]:
                indeg[c] -= 1
                if indeg[c] == 0:
                    heapq.heappush(heap, self.index[c])
        return tuple(out)

    def feedback_body(self, declarer: str) -> tuple[str, ...]:
        """An arc's between-set: rerun target, declarer and every node between, declared order."""
        fb = self.by_id[declarer].feedback
        if fb is None:
            return ()
        return self.between(fb.rerun, declarer)

    def between(self, target: str, declarer: str) -> tuple[str, ...]:
        """Nodes on any depends_on path from target up to and including declarer."""
        if target not in self.by_id or target not in self.ancestors(declarer):
            return ()
        inner = (self.descendants(target) & self.ancestors(declarer)) | {target, declarer}
        return tuple(nid for nid in self.ids if nid in inner)

    @cached_property
    def arcs(self) -> dict[str, tuple[str, ...]]:
        """declarer id → its feedback body, for every node that declares an arc."""
        return {n.id: self.feedback_body(n.id) for n in self.nodes if n.feedback is not None}

    @cached_property
    def body_owner(self) -> dict[str, str]:
        """body node id → the declarer whose loop it lies in (bodies are disjoint)."""
        owner: dict[str, str] = {}
        for declarer, body in self.arcs.items():
            for nid in body:
                owner.setdefault(nid, declarer)
        return owner

    def executions_of(self, node_id: str) -> int:
        """One node's executions at most: (1 + its loop's rounds) × (1 + its retries)."""
        owner = self.body_owner.get(node_id)
        fb = self.by_id[owner].feedback if owner is not None else None
        rounds = fb.max if fb is not None else 0
        return (1 + rounds) * (1 + max(self.by_id[node_id].retry.max, 0))

    def worst_case_executions(self) -> int:
        """Node executions in the worst case: the sum of ``executions_of`` over every node."""
        return sum(self.executions_of(n.id) for n in self.nodes)
