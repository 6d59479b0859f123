"""The runner seam: what every runner is given (Invocation), gives back (Output), and declares
(Runner: the environment it receives, its argv); what an agent runtime adds (AgentRuntime:
its sessions and transcripts, its configuration home, how it is rehearsed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from omg.kinds import Cause
from omg.runners.limits import Limit
from omg.runners.process import Spawner
from omg.runners.room import Room
from omg.spend import ProxyRecord, Spend

if TYPE_CHECKING:  # a runner that holds no key never loads the proxy
    from omg.graph.model import Node
    from omg.modelproxy.executions import Pricer
    from omg.runners.keys import HeldKey

#: The headers a rehearsed agent node's requests carry, so the stub model knows who asks.
NODE_HEADER, ROUND_HEADER, ATTEMPT_HEADER = "X-Omg-Node", "X-Omg-Round", "X-Omg-Attempt"


@dataclass(frozen=True, kw_only=True)
class Invocation:
    """One execution of one node, fully rendered."""

    node: Node
    text: str  # the rendered prompt (agent) or command (shell)
    cwd: Path
    env: Mapping[str, str]
    timeout_s: float
    session_id: str | None = None  # a fresh session id (claude) to pass as --session-id
    resume_session: str | None = None  # a parent's session to --resume (handoff: session)
    resume_cost_usd: float = 0.0  # what that session had cost: the CLI reports it cumulatively
    #: resume_session is forked under session_id (a handoff) or, False, continued as itself (a
    #: retry of an attempt stopped at its turn limit: the same session, files and context)
    fork: bool = True
    budget_usd: float | None = None
    #: USD per million tokens by model (the graph's ``prices:``), for runtimes that report
    #: tokens, not dollars (codex)
    prices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Output:
    """What one execution produced, before any success check judged it."""

    exit_code: int | None
    result: str
    session_id: str | None = None
    spend: Spend = field(default_factory=Spend)
    error: Cause | None = None  # run_error | timeout | output_error | budget_exceeded
    detail: str = ""
    duration_s: float = 0.0
    denials: tuple[str, ...] = ()  # tool calls the agent was refused (permission_denials)
    tool_version: str = ""  # the agent CLI's version
    api_retries: int = 0  # how often the CLI retried the API (stream-json system/api_retry)
    #: A provider's limit stopped it (a usage or rate limit): the run pauses, nothing failed.
    limit: Limit | None = None
    #: What omg's model proxy saw of it (None: it ran without the proxy).
    proxy: ProxyRecord | None = None
    #: The structured reply as JSON text, when the CLI reports it apart from the reply's text
    #: (claude's ``structured_output``); None: the reply's text is what a schema judges.
    structured: str | None = None


@dataclass(frozen=True)
class Step:
    """One thing the agent did or said: a tool call, a tool's refusal, or its text."""

    at: str  # the transcript's timestamp, "" when it has none
    kind: str  # "tool" | "text" | "error"
    text: str  # one line: "Edit hello.sh", "DONE …"


class Runner(Protocol):
    """What every kind of node's runner is — the shell's and each agent runtime's: it turns an
    Invocation into argv and runs it through the one spawner."""

    #: Prefixes of the parent's variables this runner's children receive unasked (a runtime's
    #: endpoint, auth and settings); everything else only when a node's ``env:`` names it.
    env_prefixes: tuple[str, ...]

    def argv(self, inv: Invocation) -> list[str]:
        """The child's argv, as a dry run shows it."""
        ...

    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        """Run one attempt and say what its reply means."""
        ...


class AgentRuntime(Runner, Protocol):
    """An agent runtime (``runners/<runtime>/``): a Runner that also declares its sessions,
    where its transcripts live, its configuration home in an execution's room, and how it is
    rehearsed."""

    #: Whether omg names a fresh session (claude's --session-id); False when the CLI names
    #: its own (codex's thread id, known once it starts) and omg records the one it reports.
    names_sessions: bool
    #: Where this runtime keeps its session transcripts while an execution runs (in its room),
    #: as a user would look for them.
    transcript_home: str
    #: How a user pins this runtime's CLI to one version, so every leg behaves alike.
    pin_hint: str
    #: The variables ``furnish`` sets: where this runtime's CLI keeps its configuration. A
    #: graph's ``env:`` may not set them (the graph schema refuses them), and no module
    #: outside this runtime's folder names them.
    room_env: tuple[str, ...]

    def furnish(self, room: Room, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` (an execution's, its HOME not yet moved) with this runtime's configuration
        home made in ``room`` and holding only what omg writes there; argv says what else its
        CLI may read (the repository's own settings only when the node opts in)."""
        ...

    def transcript(self, env: Mapping[str, str], cwd: Path, session: str) -> Path | None:
        """Where a session's transcript is (kept after it, restored before a resume); None
        when this runtime keeps none."""
        ...

    def steps(self, transcript: Path) -> list[Step]:
        """What the agent did in a kept transcript, in order."""
        ...

    def rehearsal_env(self, parent: Mapping[str, str], url: str) -> dict[str, str]:
        """``parent`` as a rehearsed leg's children see it: the model at ``url`` (the stub),
        no real credentials (its state is in each execution's room, as always)."""
        ...

    def rehearsal_tags(
        self, env: Mapping[str, str], node: str, round_: int, attempt: int
    ) -> dict[str, str]:
        """``env`` with what makes a rehearsed request name its node, round and attempt."""
        ...

    def endpoint(self, url: str) -> dict[str, str]:
        """The variables that point this runtime at the model at ``url`` (the stub's)."""
        ...

    def hold_key(self, parent: Mapping[str, str]) -> HeldKey | None:
        """The model key omg's environment ``parent`` gives this runtime, for omg's proxy to
        hold (None: no key variable; its CLI then uses a stored login, directly)."""
        ...

    def keyless(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` without this runtime's key variables."""
        ...

    def through_proxy(
        self, env: Mapping[str, str], held: HeldKey, url: str, placeholder: str
    ) -> dict[str, str]:
        """``env`` pointing this runtime's CLI at omg's proxy at ``url``, with one
        execution's ``placeholder`` as its only key."""
        ...

    def pricer(self, model: str | None, prices: Mapping[str, Mapping[str, float]]) -> Pricer:
        """What one answer of the model API costs, for a node of ``model`` (the graph's
        ``prices:`` given)."""
        ...


def is_env_failure(exit_code: int | None, output: str) -> bool:
    """Exit 126/127 or "command not found": the environment is broken, not the work."""
    if exit_code in (126, 127):
        return True
    return "command not found" in output[-2000:]
