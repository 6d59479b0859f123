"""Limits: what a leg can carry — strings without NUL, a snapshot one event line holds, and the
names placeholder values travel under. Refused at load, so no leg crashes on them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from omg.graph.findings import Finding
from omg.graph.positions import Path, Positions, json_path

if TYPE_CHECKING:
    from omg.graph.model import Graph, Node

#: Each distinct placeholder of a command becomes ``OMG_P1``, ``OMG_P2`` … in its environment.
VARIABLE_PREFIX = "OMG_P"
VARIABLE = re.compile(r"OMG_P[0-9]+")
#: The most a graph's JSON form may take: the run records it in its first event, one line of
#: events.jsonl, which a reader refuses past 1 MiB; inputs get 256 KiB of the rest.
MAX_SNAPSHOT_BYTES = 512 * 1024
#: The most a graph file may hold: read no further, parsed never (twice the snapshot, for
#: comments and indentation).
MAX_GRAPH_FILE_BYTES = 2 * MAX_SNAPSHOT_BYTES
#: The most a run's inputs may take together, in the same event.
MAX_INPUT_BYTES = 256 * 1024
#: The longest node id or worktree name: each names a file or directory (``<id>.out``) and a
#: ref component, which a file system caps at 255 bytes.
MAX_NAME = 100
#: The longest graph name: a run id holds it whole (``pr-<n>-<name>-<head>`` and the other
#: forms leave it at least 70 of their 100 characters), so two names never share an id.
MAX_GRAPH_NAME = 64
#: A graph name as a run id holds it: lower case, so no two names share a run directory or a
#: ref on a file system that ignores case.
GRAPH_NAME = re.compile(r"[a-z0-9](?:[a-z0-9_-]|\.(?!\.))*")
#: What git refuses in a branch name (``git check-ref-format``).
_BAD_REF = re.compile(r"\.\.|@\{|//|[\x00-\x20\x7f~^:?*\[\\]|^[/.-]|[/.]$|\.lock$|/\.|\.lock/")


def check_limits(graph: Graph, file: str, positions: Positions | None) -> list[Finding]:
    """NUL bytes anywhere, reserved environment names, names too long for a file or a ref."""
    out = [
        _at(file, positions, p, "nul-byte", _nul(p), _node(graph, p)) for p in _nuls(graph.data, ())
    ]
    for i, node in enumerate(graph.nodes):
        for name, _ in node.env:
            if VARIABLE.fullmatch(name):
                out.append(
                    _at(
                        file,
                        positions,
                        ("nodes", i, "env", name),
                        "env-reserved",
                        f"env: {name} is reserved: omg passes each placeholder value of a shell "
                        "command to it as OMG_P1, OMG_P2 …; pick another name",
                        node.id,
                    )
                )
    for i, node in enumerate(graph.nodes):
        raw = graph.data["nodes"][i]
        nested = isinstance(raw, Mapping) and isinstance(raw.get("worktree"), Mapping)
        out.extend(_names(node, i, nested, file, positions))
    return out


def too_large(data: Any, file: str, positions: Positions | None) -> Finding | None:
    """The graph's JSON form past what a run records, at its longest value — checked before
    anything is spliced, compiled or scanned, so an oversized graph costs only its reading."""
    size = snapshot_bytes(data)
    if size <= MAX_SNAPSHOT_BYTES:
        return None
    path, longest = _longest(data, ())
    return _at(
        file,
        positions,
        path,
        "graph-too-large",
        f"the graph takes {size:,} bytes as JSON, {more()}; the longest value is "
        f"{json_path(path)} ({longest:,} bytes) — move long text into a file the node reads",
    )


def graph_name(data: Any, file: str, positions: Positions | None) -> Finding | None:
    """A graph's ``name:`` when it is not already the form its run ids hold (``review loop``,
    ``Review-Loop`` and ``review-loop`` would share ``pr-1-review-loop-…``), with that form."""
    name = data.get("name") if isinstance(data, Mapping) else None
    if not isinstance(name, str) or not name or _is_graph_name(name):
        return None
    fixed = re.sub(r"[^a-z0-9._-]+", "-", name.lower())
    fixed = re.sub(r"\.{2,}", ".", fixed).strip("-._")[:MAX_GRAPH_NAME].rstrip("-._")
    if fixed.endswith(".lock"):
        fixed = fixed[:-5] + "-lock"
    shown = name if len(name) <= 60 else name[:57] + "..."
    return _at(
        file,
        positions,
        ("name",),
        "graph-name",
        f"name: {shown!r} is not how a run id writes it, so graphs whose names differ only in "
        f"spelling would share one; use at most {MAX_GRAPH_NAME} lower-case letters, digits, "
        f"'.', '_' or '-', starting with a letter or digit"
        + (f" — write name: {fixed}" if fixed else ""),
    )


def _is_graph_name(name: str) -> bool:
    return (
        len(name) <= MAX_GRAPH_NAME
        and GRAPH_NAME.fullmatch(name) is not None
        and not name.endswith((".", ".lock"))
    )


def more() -> str:
    """Why a graph's JSON form has a limit, as a refusal says it."""
    return (
        f"more than the {MAX_SNAPSHOT_BYTES:,} a run records it in (its first event is one "
        "line of events.jsonl)"
    )


def file_too_large(file: str, size: int) -> Finding:
    """A graph file of ``size`` bytes, past MAX_GRAPH_FILE_BYTES: refused before it is parsed."""
    return Finding(
        file,
        None,
        "error",
        "graph-too-large",
        f"the file holds {size:,} bytes, more than the {MAX_GRAPH_FILE_BYTES:,} a graph file "
        f"may hold (a run records the graph in at most {MAX_SNAPSHOT_BYTES:,} bytes of JSON), "
        "so it was not read — move long text into files the nodes read",
    )


def _names(
    node: Node, i: int, nested: bool, file: str, positions: Positions | None
) -> Iterator[Finding]:
    """A node id or worktree name too long for a file name, or one git cannot take in a ref."""
    if len(node.id) > MAX_NAME:
        why = f"node id is {len(node.id)} characters, more than the {MAX_NAME} a file name holds"
        yield _at(
            file, positions, ("nodes", i, "id"), "name-too-long", why + "; shorten it", node.id
        )
    wt = node.worktree
    if wt is None:
        return
    at: Path = ("nodes", i, "worktree", "name") if nested else ("nodes", i, "worktree")
    if len(wt.name) > MAX_NAME or ".." in wt.name or wt.name.endswith((".", ".lock")):
        yield _at(
            file, positions, at, "worktree-name",
            f"worktree name {wt.name[:60]!r} cannot name a git branch (omg/work/<run>/<name>): "
            f"use at most {MAX_NAME} letters, digits, '.', '_' or '-', with no '..', not "
            "ending in '.' or '.lock'", node.id,
        )  # fmt: skip
    if wt.branch is not None and "{{" not in wt.branch and _BAD_REF.search(wt.branch):
        yield _at(
            file, positions, ("nodes", i, "worktree", "branch"), "worktree-branch",
            f"worktree branch {wt.branch[:60]!r} is not a git branch name (no spaces, '..', "
            "'~^:?*[\\', '@{', and no '.', '/' or '.lock' at either end of a part); name the "
            "branch as `git branch` would", node.id,
        )  # fmt: skip


def snapshot_bytes(value: Any) -> int:
    """How many bytes ``value`` takes in an event line (compact JSON, UTF-8)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return len(text.encode("utf-8", "surrogatepass"))


def _nuls(value: Any, path: Path) -> Iterator[Path]:
    if isinstance(value, str):
        if "\0" in value:
            yield path
    elif isinstance(value, Mapping):
        for k, v in value.items():
            if "\0" in str(k):
                yield (*path, k)
            yield from _nuls(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _nuls(v, (*path, i))


def _node(graph: Graph, path: Path) -> str | None:
    index = path[1] if len(path) > 1 and path[0] == "nodes" else None
    return graph.nodes[index].id if isinstance(index, int) and index < len(graph.nodes) else None


def _nul(path: Path) -> str:
    inside = len(path) > 2 and path[0] == "nodes" and isinstance(path[1], int)
    where = ".".join(map(str, path[2:])) if inside else json_path(path)
    return (
        f"{where} holds a NUL byte (\\0), which no command line, environment or file name "
        "can carry; remove it"
    )


def _longest(value: Any, path: Path) -> tuple[Path, int]:
    if isinstance(value, Mapping):
        items = [((*path, k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [((*path, i), v) for i, v in enumerate(value)]
    else:
        return path, snapshot_bytes(value)
    best: tuple[Path, int] = (path, 0)
    for sub, v in items:
        hit = _longest(v, sub)
        if hit[1] > best[1]:
            best = hit
    return best


def _at(
    file: str,
    positions: Positions | None,
    path: Path,
    code: str,
    message: str,
    node: str | None = None,
) -> Finding:
    line, col = (None, None) if positions is None else positions.at(path)
    where, via = (file, "") if positions is None else positions.origin(path, file)
    return Finding(where, line, "error", code, message, node, col, json_path(path), via)
