"""The claude runtime: agent nodes run by the Claude Code CLI — argv, environment, reply,
stream, transcripts and rehearsal, all of it here and nowhere else."""

from __future__ import annotations

from omg.runners.claude.runner import ClaudeRunner

__all__ = ["ClaudeRunner"]
