"""What ``codex exec --json`` prints: its thread, its agent messages, its usage and its
errors, read from the JSON lines; and the watch that stops a refused key's reconnects."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: Words of the item codex reports, without failing, for a model it has no metadata for.
METADATA_NOTE = re.compile(r"model metadata .* not found", re.IGNORECASE)
#: A reconnect's status, as codex words it: "Reconnecting… 2/5 (unexpected status 401 …)".
STATUS = re.compile(r"\bstatus:? (\d{3})\b")


@dataclass
class Stream:
    """One execution's events, folded."""

    thread_id: str | None = None
    messages: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    completed: bool = False
    failure: str = ""  # turn.failed's message
    errors: list[str] = field(default_factory=list)  # error events (reconnects among them)
    notes: list[str] = field(default_factory=list)  # non-fatal error items (model metadata)
    tools: int = 0  # commands and file changes the agent made

    @property
    def reply(self) -> str:
        """The last agent message, or "" when there was none."""
        return self.messages[-1] if self.messages else ""

    @property
    def reconnects(self) -> int:
        return sum(1 for e in self.errors if e.lower().startswith("reconnecting"))

    def statuses(self) -> list[int]:
        """The HTTP statuses the errors name, in order."""
        return [int(m.group(1)) for e in self.errors for m in [STATUS.search(e)] if m]


def parse(stdout: str) -> Stream:
    """The stream of one ``codex exec --json`` run (lines that are not JSON are skipped)."""
    s = Stream()
    for line in stdout.splitlines():
        ev = _json(line)
        if ev is None:
            continue
        kind = ev.get("type")
        if kind == "thread.started" and isinstance(ev.get("thread_id"), str):
            s.thread_id = ev["thread_id"]
        elif kind == "turn.completed":
            s.completed = True
            raw = ev.get("usage")
            if isinstance(raw, dict):
                for k, v in raw.items():
                    if isinstance(v, int) and not isinstance(v, bool):
                        s.usage[k] = s.usage.get(k, 0) + v
        elif kind == "turn.failed":
            err = ev.get("error")
            s.failure = str(err.get("message", "")) if isinstance(err, dict) else str(err or "")
        elif kind == "error":
            s.errors.append(str(ev.get("message", "")))
        elif kind == "item.completed" and isinstance(ev.get("item"), dict):
            item = ev["item"]
            itype = item.get("type")
            if itype == "agent_message":
                s.messages.append(str(item.get("text", "")))
            elif itype == "error":
                s.notes.append(str(item.get("message", "")))
            elif itype in ("command_execution", "file_change", "mcp_tool_call"):
                s.tools += 1
    return s


def _json(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        ev = json.loads(line)
    except ValueError:
        return None
    return ev if isinstance(ev, dict) else None


#: Refusals of the credentials after which omg stops codex (it would reconnect five times).
AUTH_RETRIES = 2


class AuthRetries:
    """A ``give_up`` watch: a reason once codex has reconnected ``AUTH_RETRIES`` times after
    the API refused its credentials (HTTP 401/403)."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, line: str) -> str | None:
        if '"error"' not in line:
            return None
        ev = _json(line)
        if ev is None or ev.get("type") != "error":
            return None
        m = STATUS.search(str(ev.get("message", "")))
        if m and m.group(1) in ("401", "403"):
            self.seen.append(int(m.group(1)))
        if len(self.seen) < AUTH_RETRIES:
            return None
        return f"the API refused the credentials {len(self.seen)} times (HTTP {self.seen[-1]})"
