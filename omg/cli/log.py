"""`omg log`: a run's whole event log as one stream, whatever chunks it is kept in — as JSON lines
exactly as recorded (``--json``, for jq) or one readable line per event; ``--follow`` keeps
printing what a running leg appends until that leg ends."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from omg.cli import exits
from omg.errors import StateError, UsageError
from omg.state.events import EVENT_KINDS
from omg.state.log import Follow, Line, lines
from omg.state.runid import check_run_id
from omg.state.store import RunDir, load_run

#: Fields every line carries (shown in a line's own columns, or not at all).
_ENVELOPE = frozenset({"schema", "run_id", "seq", "ts", "leg", "event", "node_id"})
#: Characters of a value a readable line shows (the --json line holds it whole).
SHOWN = 300


def show(
    runs_dir: Path,
    run_id: str,
    *,
    follow: bool,
    as_json: bool,
    nodes: Sequence[str],
    events: Sequence[str],
) -> int:
    """Print the run's events in seq order (filtered by node and event kind); 0, or 3 when the
    record is damaged (raised: nothing is printed past the damage)."""
    unknown = [e for e in events if e not in EVENT_KINDS]
    if unknown:
        raise UsageError(
            f"--event {unknown[0]!r} is no event kind; the kinds: {', '.join(EVENT_KINDS)}"
        )
    rundir = RunDir(runs_dir / check_run_id(run_id))
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {runs_dir}; `omg status` lists the runs there")
    state, last = load_run(rundir)  # verified before a line is printed
    named = {n["id"] for n in state["graph"].get("nodes", [])} | set(state["gates"])
    missing = [n for n in nodes if n not in named]
    if missing:
        known = ", ".join(sorted(named))
        raise StateError(f"run {run_id!r} has no node {missing[0]!r}; its nodes: {known}")
    stream: Iterable[Line] = Follow(rundir) if follow else lines(rundir, 0, last)
    try:
        for line in stream:
            ev = line.event
            if (nodes and ev.get("node_id") not in nodes) or (events and ev["event"] not in events):
                continue
            print(line.text if as_json else readable(line), flush=follow)
    except BrokenPipeError:  # `omg log RUN --json | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exits.PASSED
    if isinstance(stream, Follow) and stream.ended != "finished":
        said = {
            "stopped": "its leg stopped without recording its end (killed, or running on "
            f"another machine); `omg status {run_id}` says which",
            "idle": "no leg of it is running here: nothing more to follow",
        }
        print(f"omg log: run {run_id!r}: {said[stream.ended or 'idle']}", file=sys.stderr)
    return exits.PASSED


def readable(line: Line) -> str:
    """One event on one line: seq, time, leg, kind, node, then its other scalar fields
    (``detail`` last); every character a terminal would act on is shown escaped."""
    ev = cast(dict[str, Any], line.event)
    head = f"{line.seq:>6} {ev.get('ts', '')} leg {ev.get('leg', '?')} {ev['event']:<16}"
    parts = [head + (f" {_inert(str(ev['node_id']))}" if ev.get("node_id") else "")]
    for key in sorted(k for k in ev if k not in _ENVELOPE and k != "detail"):
        value = ev[key]
        if key == "graph" and isinstance(value, dict):
            parts.append(f"graph={_inert(str(value.get('name', '?')))}")
        elif isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
            parts.append(f"{key}={_inert(','.join(map(str, value)))}")
        elif not isinstance(value, dict | list):
            parts.append(f"{key}={_inert(str(value))}")
    if ev.get("detail"):
        parts.append(f"— {_inert(str(ev.get('detail')))}")
    return "  ".join(parts)


def _inert(text: str) -> str:
    """``text`` clipped, with every non-printable character (control, escape, bidi
    override, line break) written as its Python escape."""
    clipped = text if len(text) <= SHOWN else text[:SHOWN] + "…"
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in clipped)
