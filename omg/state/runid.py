"""Run ids: the one rule every command checks before a run id names a directory or a branch.

A run id is one path component under ``.omg/runs/`` and one component of ``omg/runs/<id>``:
letters, digits, '.', '_' and '-', starting with a letter or digit, at most ``MAX_RUN_ID``
characters, never holding ``..`` nor ending in ``.`` or ``.lock`` (git refuses those in a ref).
The whole string must match — a trailing newline, a NUL or a '/' is refused, not cut off.
And the ids the job gives the runs it starts: a pull request head's, a schedule's day's, a
dispatch's.
"""

from __future__ import annotations

import re

from omg.errors import UsageError

MAX_RUN_ID = 100
_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def is_run_id(value: str) -> bool:
    return (
        len(value) <= MAX_RUN_ID
        and _SHAPE.fullmatch(value) is not None
        and ".." not in value
        and not value.endswith((".", ".lock"))
    )


def check_run_id(value: str) -> str:
    """``value`` when it is a run id, else a UsageError saying what one looks like."""
    if not is_run_id(value):
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise UsageError(
            f"{shown!r} is not a run id: use at most {MAX_RUN_ID} letters, digits, "
            "'.', '_' or '-', starting with a letter or digit (no '..', not ending in '.' or "
            "'.lock'); a run lives in .omg/runs/<run-id>, never outside it"
        )
    return value


def slug(text: str, room: int) -> str:
    """``text`` made into run-id characters, at most ``room`` long (a graph's name in an id)."""
    out = re.sub(r"\.{2,}", ".", _UNSAFE.sub("-", text))[: max(room, 1)]
    out = out.rstrip(".")
    if out.endswith(".lock"):
        out = out[:-5] + "-lock"
    return out or "run"


def pr_run_id(number: int, graph_name: str, head_sha: str) -> str:
    """``pr-<n>-<graph>-<head7>``: one run per pull request head, so no verdict crosses heads
    (a long graph name is cut to keep the id within a run id's length)."""
    head = head_sha[:7]
    name = slug(graph_name or "graph", MAX_RUN_ID - len(f"pr-{number}--{head}"))
    return f"pr-{number}-{name}-{head}"


def dated_run_id(graph_name: str, day: str) -> str:
    """``schedule-<graph>-<YYYYMMDD>``: one scheduled run of a graph a day (UTC), so a second
    scheduled job that day finds it and continues or refuses, never starts another."""
    name = slug(graph_name or "graph", MAX_RUN_ID - len(f"schedule--{day}"))
    return f"schedule-{name}-{day}"


def dispatched_run_id(graph_name: str, workflow_run: str) -> str:
    """``dispatch-<graph>-<workflow run id>``: a run a dispatch started without naming one."""
    name = slug(graph_name or "graph", MAX_RUN_ID - len(f"dispatch--{workflow_run}"))
    return f"dispatch-{name}-{workflow_run}"
