"""The runtimes: the agent runtimes a graph may name, and what each declares for lint.

Each entry of ``RULES`` is one runtime's word on the nodes that name it: the keys it has no
meaning for (load refuses them, with the fix), whether it reports tokens rather than dollars
(a dollar budget then needs the graph's ``prices:``), and what lint advises. Pure data below
``graph/``, which reads it without importing ``runners/``; ``runners/registry`` keys each
runtime's runner by the names declared here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

#: The agent runtimes a graph may name: the schema's enum, and the registry's agent runtimes
#: plus the reserved ones (``tests/runners/test_registry.py`` holds the three equal).
Runtime = Literal["claude", "codex"]
RUNTIMES: tuple[Runtime, ...] = get_args(Runtime)
#: The runtime an agent node gets when it names none.
DEFAULT_RUNTIME: Runtime = "claude"
#: Runtimes a graph may name that no omg runs yet (lint refuses them).
RESERVED_RUNTIMES: tuple[Runtime, ...] = ()


@dataclass(frozen=True)
class Refusal:
    """A node key a runtime has no meaning for: load refuses it on that runtime's nodes."""

    key: str
    fix: str  # why, and what to do instead


@dataclass(frozen=True)
class Subagents:
    """Where a runtime's CLI looks up a node's ``agent:`` in the checkout (read only with
    ``project_settings: true``), and the agents it has built in."""

    folder: str
    built_in: frozenset[str]


@dataclass(frozen=True)
class RootRefusal:
    """A ``permission_mode`` the runtime's CLI refuses to run as root, the variable that lets
    it in a sandbox, and what lint advises."""

    mode: str
    escape: str
    advice: str


@dataclass(frozen=True)
class Rules:
    """What lint knows of one agent runtime's nodes."""

    refuses: tuple[Refusal, ...] = ()
    #: It reports tokens, not dollars: a dollar budget is priced from the graph's ``prices:``.
    prices_tokens: bool = False
    #: The checkout's files ``project_settings: true`` lets its CLI load.
    project_files: str = ""
    subagents: Subagents | None = None
    as_root: RootRefusal | None = None

    def takes(self, key: str) -> bool:
        """Whether a node of this runtime may set ``key``."""
        return all(r.key != key for r in self.refuses)


CLAUDE = Rules(
    project_files=".claude/settings.json, .claude/settings.local.json, .mcp.json",
    # the subagents claude 2.1.332 has built in: found without the checkout's .claude/agents/
    subagents=Subagents(
        ".claude/agents/",
        frozenset({"claude", "Explore", "general-purpose", "Plan", "statusline-setup"}),
    ),
    as_root=RootRefusal(
        "bypassPermissions",
        "IS_SANDBOX",
        "permission_mode bypassPermissions: the claude CLI refuses it as root or under sudo "
        "(the default user of many CI containers) and the node fails before it starts; run "
        "the job as a non-root user, or — in a throwaway container or VM only — give the node "
        "env: {IS_SANDBOX: '1'}, the CLI's way out for sandboxes; or use acceptEdits / dontAsk "
        "with allowed_tools",
    ),
)

CODEX = Rules(
    # claude's settings with no codex meaning
    refuses=(
        Refusal(
            "agent",
            "agent: names a claude subagent (.claude/agents/); codex has none — drop agent:",
        ),
        Refusal(
            "allowed_tools",
            "allowed_tools is claude's tool grammar (Bash(make test), Write…); codex has no tool "
            "allow-list, its sandbox bounds it — drop allowed_tools and set permission_mode (plan "
            "= read-only, the default = workspace-write, bypassPermissions = danger-full-access)",
        ),
        Refusal(
            "max_turns",
            "max_turns is claude's --max-turns; codex has no turn limit — drop max_turns",
        ),
    ),
    prices_tokens=True,
    project_files=".codex/config.toml, the project trusted",
)

#: Each runtime a graph may name, and its rules (in the order lint lists them).
RULES: dict[Runtime, Rules] = {"claude": CLAUDE, "codex": CODEX}
