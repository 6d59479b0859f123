"""Pure: the commit status ``omg/<graph>`` a run shows on the head it judges — its state and a
plain-text description within GitHub's 140 characters, untrusted text made inert."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

#: GitHub's states for a commit status.
StatusState = Literal["pending", "success", "failure", "error"]
#: GitHub keeps at most this many characters of a status description.
LIMIT = 140
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class CommitStatus:
    """One status to set: ``context`` on ``sha``, linking to the leg's workflow run."""

    sha: str
    context: str
    state: StatusState
    description: str
    target_url: str


def context(graph_name: str) -> str:
    """The status context of a graph: ``omg/<name>`` (the name made one plain line)."""
    return clip(f"omg/{graph_name}", 100)


def inert(text: str) -> str:
    """``text`` as one plain line: control and format characters (bidi overrides, zero-width)
    dropped, every run of white space one space."""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in text
        if ch.isspace() or unicodedata.category(ch)[0] != "C"
    )
    return _SPACE.sub(" ", kept).strip()


def clip(text: str, limit: int = LIMIT) -> str:
    """``inert(text)`` in at most ``limit`` characters, cut at a character (never inside a
    surrogate pair) and marked with ``…`` when cut."""
    line = inert(text)
    if len(line) <= limit:
        return line
    return line[: limit - 1].rstrip() + "…"


#: What a status says first while the pull request changes the graph that judges it.
CHANGED = "the PR's graph change applies once merged"


def changing(description: str) -> str:
    """``description`` of a run whose pull request changes its graph, saying so first (so no
    cut can drop it): the base's graph judges the PR, and the change applies once merged."""
    return clip(f"{CHANGED} · {description}")


def describe(
    status: str, *, gate: str = "", ref: str = "", leg: int = 0, note: str = ""
) -> tuple[StatusState, str]:
    """The state and description for a run's situation (``status`` as the report words it:
    passed, failed, paused, continuing, running, superseded)."""
    short = ref[:7]
    at = f" @{short}" if short else ""
    if status == "passed":
        return "success", "passed"
    if status == "failed":
        return "failure", clip(f"failed{': ' + note if note else ''}")
    if status == "superseded":
        return "error", clip(f"superseded{': ' + note if note else ''}")
    if status == "paused" and gate:
        return "pending", clip(
            f"paused at gate {gate}: comment /omg approve {gate}{at} or /omg reject {gate}{at} "
            "<reason>"
        )
    if status == "continuing":
        return "pending", "continuing: the next leg is dispatched"
    return "pending", clip(f"running{f' leg {leg}' if leg else ''}{': ' + note if note else ''}")
