"""Runtimes: how one node execution becomes a child process and an Output.

``base`` is the seam every runtime implements, ``registry`` the one list of them; each runtime
lives in its own module or package (``shell``, ``claude/``) and nothing outside it knows its
specifics.
"""

from __future__ import annotations

from omg.runners.base import AgentRuntime, Invocation, Output, Runner, Step, is_env_failure
from omg.runners.process import tail
from omg.runners.registry import agents, default_runners

__all__ = [
    "AgentRuntime",
    "Invocation",
    "Output",
    "Runner",
    "Step",
    "agents",
    "default_runners",
    "is_env_failure",
    "tail",
]
