"""Runtimes: how one node execution becomes a child process and an Output."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from omg.graph.model import Node
from omg.kinds import Cause
from omg.runners.process import Spawner, tail


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
    budget_usd: float | None = None


@dataclass(frozen=True)
class Output:
    """What one execution produced, before any success check judged it."""

    exit_code: int | None
    result: str
    session_id: str | None = None
    cost_usd: float = 0.0
    cost_unknown: bool = False
    usage: Mapping[str, int] = field(default_factory=dict)
    error: Cause | None = None  # run_error | timeout | output_error | budget_exceeded
    detail: str = ""
    duration_s: float = 0.0
    denials: tuple[str, ...] = ()  # tool calls the agent was refused (permission_denials)
    session_cost_usd: float | None = None  # the session's cumulative cost as the CLI reported it
    tool_version: str = ""  # the agent CLI's version
    api_retries: int = 0  # how often the CLI retried the API (stream-json system/api_retry)


class Runner(Protocol):
    """Turns an Invocation into argv and runs it through the one spawner."""

    def argv(self, inv: Invocation) -> list[str]: ...

    def run(self, inv: Invocation, spawn: Spawner) -> Output: ...


def is_env_failure(exit_code: int | None, output: str) -> bool:
    """Exit 126/127 or "command not found": the environment is broken, not the work."""
    if exit_code in (126, 127):
        return True
    return "command not found" in output[-2000:]


def default_runners() -> dict[str, Runner]:
    """The registry: one runner per kind a node can name (``shell``, and each agent runtime)."""
    from omg.runners.claude import ClaudeRunner
    from omg.runners.shell import ShellRunner

    return {"shell": ShellRunner(), "claude": ClaudeRunner()}


__all__ = ["Invocation", "Output", "Runner", "default_runners", "is_env_failure", "tail"]
