"""Claude Code's session transcripts: where the CLI keeps one, and the steps it records."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omg.runners.base import Step


def transcript_path(env: Mapping[str, str], cwd: Path, session: str | None) -> Path | None:
    """Where claude keeps a session's transcript: ``<config>/projects/<cwd, every character
    that is not a letter or digit replaced by '-'>/<session>.jsonl``; the config directory is
    ``CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    if not session:
        return None
    config = env.get("CLAUDE_CONFIG_DIR") or (
        os.path.join(env["HOME"], ".claude") if env.get("HOME") else None
    )
    if config is None:
        return None
    project = re.sub(r"[^A-Za-z0-9]", "-", str(cwd.resolve()))
    return cwd / config / "projects" / project / f"{session}.jsonl"  # a relative one is cwd's


def size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def steps(path: Path, limit: int = 200) -> list[Step]:
    """The assistant's steps in a transcript, in order (the last ``limit`` of them); lines
    that are not JSON, and records that are not the assistant's, are passed over."""
    found: list[Step] = []
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        try:
            rec: Any = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("message"), dict):
            continue
        content = rec["message"].get("content")
        at = str(rec.get("timestamp") or "")
        for block in content if isinstance(content, list) else []:
            step = _step(rec.get("type"), block, at)
            if step is not None:
                found.append(step)
    return found[-limit:]


def _step(role: object, block: object, at: str) -> Step | None:
    if not isinstance(block, dict):
        return None
    if role == "assistant" and block.get("type") == "tool_use":
        given = block.get("input")
        first = ""
        if isinstance(given, dict):
            first = str(
                given.get("command") or given.get("file_path") or given.get("pattern") or ""
            )
        return Step(at, "tool", _line(f"{block.get('name', 'tool')} {first}"))
    if role == "assistant" and block.get("type") == "text" and str(block.get("text", "")).strip():
        return Step(at, "text", _line(str(block["text"])))
    if role == "user" and block.get("type") == "tool_result" and block.get("is_error"):
        return Step(at, "error", _line(str(block.get("content", ""))))
    return None


def _line(text: str, limit: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
