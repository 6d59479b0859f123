"""The splice's size, projected before a use is built: a fragment body weighed once, and what
each use adds to the graph's JSON form with its bindings, so a bomb is refused unbuilt."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from omg.graph.fragments.substitution import WITH
from omg.graph.fragments.walk import strings
from omg.graph.limits import snapshot_bytes

#: Keys a multi-node using node hands to every spliced node (``depends_on`` to its entries).
HANDED = ("cwd", "worktree")


@dataclass(frozen=True)
class Weight:
    """A fragment body's JSON bytes: each entry (a one-node body's keys, a loop's nodes by
    index), and per entry each substitution point's (occurrences, characters of its tokens)."""

    entries: Mapping[str, int]
    points: Mapping[str, Mapping[str, tuple[int, int]]]
    starts: int  # a loop's entry nodes (no depends_on), which inherit the using node's


def weigh(body: Any) -> Weight:
    """The weight of a fragment's ``node:`` (a mapping) or ``nodes:`` (a list)."""
    items = list(body.items()) if isinstance(body, Mapping) else list(enumerate(body))
    entries: dict[str, int] = {}
    points: dict[str, dict[str, tuple[int, int]]] = {}
    for k, v in items:
        key = str(k)
        entries[key] = entry(k if isinstance(k, str) else None, v)
        counts: dict[str, tuple[int, int]] = {}
        for _, text in strings(v, ()):
            for m in WITH.finditer(text):
                n, chars = counts.get(m.group(1), (0, 0))
                counts[m.group(1)] = (n + 1, chars + len(m.group(0)))
        points[key] = counts
    starts = sum(1 for _, n in items if isinstance(n, Mapping) and "depends_on" not in n)
    return Weight(entries, points, starts)


def entry(key: str | None, value: Any) -> int:
    """The bytes one member takes in its mapping (``"key":value,``) or list (``value,``)."""
    named = 0 if key is None else len(json.dumps(key, ensure_ascii=False).encode()) + 1
    return named + snapshot_bytes(value) + 1


def growth(
    weight: Weight,
    raw: Mapping[str, Any],
    binds: Mapping[str, object],
    keep: Iterable[str],
    *,
    loop: bool,
) -> int:
    """The bytes the graph's JSON form gains when the using node ``raw`` gives way to the
    body's entries ``keep`` with ``binds`` substituted: for one node, the body's keys the node
    does not override, in place of its ``use:`` and ``with:``; for a ``loop``, every node in
    place of the using node, each handed its ``cwd`` and ``worktree`` (its entry nodes, its
    ``depends_on``)."""
    sizes = {p: snapshot_bytes(v) for p, v in binds.items()}
    kept = list(keep)
    gained = 0
    for k in kept:
        gained += weight.entries[k]
        for p, (n, chars) in weight.points[k].items():
            gained += n * sizes.get(p, 0) - chars
    if not loop:
        return gained - sum(entry(k, raw[k]) for k in ("use", "with") if k in raw)
    handed = sum(entry(k, raw[k]) for k in HANDED if k in raw) * len(kept)
    if "depends_on" in raw:
        handed += entry("depends_on", raw["depends_on"]) * weight.starts
    return gained + handed - entry(None, raw)
