"""The codex runtime: agent nodes run by the OpenAI Codex CLI — argv, environment, events,
reply, rollouts and rehearsal, all of it here and nowhere else."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omg.runners.codex.runner import CodexRunner

__all__ = ["CodexRunner"]


def __getattr__(name: str) -> object:
    """``CodexRunner``, imported when first asked for: the runtime's key rules (``keys``) load
    without its runner, for a leg of shell nodes."""
    if name == "CodexRunner":
        from omg.runners.codex.runner import CodexRunner

        return CodexRunner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
