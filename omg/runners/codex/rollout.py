"""codex's rollout files (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl``):
where one thread's is, the thread's token totals so far, and what the agent did in it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from omg.runners.base import Step
from omg.runners.codex.config import users_home

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def path(env: Mapping[str, str], thread: str) -> Path | None:
    """Where the thread's rollout is, or (on a fresh machine) where codex looks for it: the
    day its UUIDv7 id was made; None for an id that is not a UUID."""
    if not _UUID.fullmatch(thread):
        return None
    sessions = users_home(env) / "sessions"
    found = sorted(sessions.glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    if found:
        return found[0]
    ms = int(thread.replace("-", "")[:12], 16)  # UUIDv7: the first 48 bits are Unix ms
    try:
        at = datetime.fromtimestamp(ms / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    name = f"rollout-{at:%Y-%m-%dT%H-%M-%S}-{thread}.jsonl"
    return sessions / f"{at:%Y}" / f"{at:%m}" / f"{at:%d}" / name


def totals(rollout: Path | None) -> dict[str, int]:
    """The thread's cumulative token usage as its rollout last recorded it ({} when none)."""
    if rollout is None:
        return {}
    try:
        lines = rollout.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    for line in reversed(lines):
        if '"total_token_usage"' not in line:
            continue
        try:
            info = json.loads(line)["payload"]["info"]["total_token_usage"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(info, dict):
            return {k: v for k, v in info.items() if isinstance(v, int) and k != "total_tokens"}
    return {}


def delta(now: Mapping[str, int], before: Mapping[str, int]) -> dict[str, int]:
    """What a resumed turn used: the thread's usage now less what it had used before."""
    return {k: max(0, v - before.get(k, 0)) for k, v in now.items()}


def steps(rollout: Path) -> list[Step]:
    """The agent's tool calls and messages, in order."""
    out: list[Step] = []
    try:
        lines = rollout.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        payload = rec.get("payload") if isinstance(rec, dict) else None
        if rec.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        at = str(rec.get("timestamp", ""))
        kind = payload.get("type")
        if kind in ("function_call", "custom_tool_call"):
            given = str(payload.get("arguments", payload.get("input", "")))
            out.append(Step(at, "tool", f"{payload.get('name', 'tool')} {_line(given)}"))
        elif kind == "message" and payload.get("role") == "assistant":
            texts = [c.get("text", "") for c in payload.get("content") or [] if isinstance(c, dict)]
            out.append(Step(at, "text", _line(" ".join(map(str, texts)))))
    return out


def _line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
