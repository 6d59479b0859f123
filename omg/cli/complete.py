"""Shell completion: run ids from `.omg/runs/`, a run's node and gate ids from its state.json.

A completion runs at every Tab, so it reads directory names and one state.json, never
verifies a record, and never raises: whatever it cannot read completes nothing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import typer

from omg.cli.fastargs import DEFAULT_RUNS

#: A state.json past this size is not read for a completion (a Tab must answer at once).
STATE_LIMIT = 8 << 20
#: What a shell may be handed as one completion: no space, quote, newline or control character.
_WORD = re.compile(r"[A-Za-z0-9._/+@:-]+")


def run_ids(runs_dir: Path, incomplete: str) -> list[str]:
    """The run ids under ``runs_dir`` starting with ``incomplete``, sorted."""
    from omg.state.runid import is_run_id

    try:
        with os.scandir(runs_dir) as entries:
            names = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []
    return sorted(n for n in names if n.startswith(incomplete) and is_run_id(n))


def _state(runs_dir: Path, run_id: str) -> dict[str, Any]:
    from omg.state.runid import is_run_id

    if not is_run_id(run_id):
        return {}
    path = runs_dir / run_id / "state.json"
    try:
        if path.stat().st_size > STATE_LIMIT:
            return {}
        with path.open("rb") as f:
            data = json.load(f)
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _graph_nodes(state: dict[str, Any]) -> list[dict[str, Any]]:
    graph = state.get("graph")
    nodes = graph.get("nodes") if isinstance(graph, dict) else None
    return [n for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else []


def _words(values: list[object], incomplete: str) -> list[str]:
    """The values that are safe shell words starting with ``incomplete``, first seen first."""
    out: list[str] = []
    for v in values:
        if isinstance(v, str) and _WORD.fullmatch(v) and v.startswith(incomplete) and v not in out:
            out.append(v)
    return out


def node_ids(runs_dir: Path, run_id: str, incomplete: str) -> list[str]:
    """The run's node ids starting with ``incomplete``: the graph's, in its order, then any
    other the record names (the keys of state.json's nodes)."""
    state = _state(runs_dir, run_id)
    nodes = state.get("nodes")
    recorded = list(nodes) if isinstance(nodes, dict) else []
    return _words([n.get("id") for n in _graph_nodes(state)] + recorded, incomplete)


def gate_ids(runs_dir: Path, run_id: str, incomplete: str) -> list[str]:
    """The gate the run is paused at first, then every gate of its graph."""
    state = _state(runs_dir, run_id)
    gates = [n.get("id") for n in _graph_nodes(state) if n.get("type") == "gate"]
    return _words([state.get("paused_at"), *gates], incomplete)


# -- typer's callbacks: what the command line says so far, from click's context ---------


def _runs_dir(ctx: typer.Context) -> Path:
    given = ctx.params.get("runs_dir")  # a str: a resilient parse converts no value
    return Path(given) if isinstance(given, str | Path) and given else DEFAULT_RUNS


def _run(ctx: typer.Context) -> str:
    """The RUN_ID given before the option being completed: click's resilient parse leaves it
    among the unparsed arguments when the option still lacks its value."""
    given = ctx.params.get("run_id")
    if isinstance(given, str):
        return given
    rest = [a for a in ctx.args if isinstance(a, str) and not a.startswith("-")]
    return rest[0] if rest else ""


def _safely(fn: Any, *args: Any) -> list[str]:
    try:
        found: list[str] = fn(*args)
        return found
    except Exception:  # a completion never breaks the shell, whatever it finds
        return []


def runs(ctx: typer.Context, incomplete: str) -> list[str]:
    """RUN_ID: the runs under ``--runs-dir`` (default ``.omg/runs``)."""
    return _safely(run_ids, _runs_dir(ctx), incomplete)


def nodes(ctx: typer.Context, incomplete: str) -> list[str]:
    """``--node``: the node ids of the run named before it."""
    return _safely(node_ids, _runs_dir(ctx), _run(ctx), incomplete)


def gates(ctx: typer.Context, incomplete: str) -> list[str]:
    """``--approve`` / ``--reject``: the gate the run is paused at, then its other gates."""
    return _safely(gate_ids, _runs_dir(ctx), _run(ctx), incomplete)
