"""The claude runtime: agent nodes run by the Claude Code CLI — argv, environment, reply,
stream, transcripts and rehearsal, all of it here and nowhere else."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omg.runners.claude.runner import ClaudeRunner

__all__ = ["ClaudeRunner"]


def __getattr__(name: str) -> object:
    """``ClaudeRunner``, imported when first asked for: the runtime's key rules (``keys``) load
    without its runner, for a leg of shell nodes."""
    if name == "ClaudeRunner":
        from omg.runners.claude.runner import ClaudeRunner

        return ClaudeRunner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
