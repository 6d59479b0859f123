"""The codex runtime: agent nodes run by the OpenAI Codex CLI — argv, environment, events,
reply, rollouts and rehearsal, all of it here and nowhere else."""

from __future__ import annotations

from omg.runners.codex.runner import CodexRunner

__all__ = ["CodexRunner"]
