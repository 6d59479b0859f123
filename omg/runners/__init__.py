"""Runtimes: how one node execution becomes a child process and an Outcome."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from omg.graph.model import Cause, Node
from omg.runners.process import Spawner


@dataclass(frozen=True)
class Invocation:
    """One execution of one node, fully rendered."""

    node: Node
    text: str  # the rendered prompt (agent) or command (shell)
    cwd: Path
    env: Mapping[str, str]
    timeout_s: float
    session_id: str | None = None  # a fresh session id (claude) to pass as --session-id
    resume_session: str | None = None  # a parent's session to --resume (handoff: session)
    budget_usd: float | None = None


@dataclass(frozen=True)
class Outcome:
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


class Runtime(Protocol):
    """Turns an Invocation into argv and runs it through the one spawner."""

    def argv(self, inv: Invocation) -> list[str]: ...

    def run(self, inv: Invocation, spawn: Spawner) -> Outcome: ...


def is_env_failure(exit_code: int | None, output: str) -> bool:
    """Exit 126/127 or "command not found": the environment is broken, not the work."""
    if exit_code in (126, 127):
        return True
    return "command not found" in output[-2000:]
