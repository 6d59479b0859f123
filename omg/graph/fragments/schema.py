"""A fragment file against schemas/fragment.schema.json: a sound one answered without
jsonschema, each violation of another at its own line, an unknown key at the key's."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from omg.graph.findings import Finding, unknown_key
from omg.graph.positions import Positions, json_path

SCHEMA_FILE = Path(__file__).parents[2] / "schemas" / "fragment.schema.json"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: What a one-node fragment may not set: the using node supplies them.
SUPPLIED = ("id", "depends_on", "feedback", "cwd", "worktree")
_TOP = {"fragment", "description", "substitutions", "node", "nodes", "exit"}


@cache
def fragment_schema() -> dict[str, Any]:
    """The fragment JSON Schema shipped beside the graph's."""
    schema: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return schema


@cache
def node_keys() -> frozenset[str]:
    """The keys a fragment's node may hold: a graph node's, as the fragment schema lists them."""
    return frozenset(fragment_schema()["properties"]["node"]["properties"])


def fragment_schema_findings(data: Any, pos: Positions, file: str) -> list[Finding]:
    """Every way ``data`` breaks the fragment schema, each at its line in ``file``."""
    if not isinstance(data, Mapping):
        return [
            Finding(
                file,
                1,
                "error",
                "fragment-schema",
                "a fragment is a mapping with fragment:, description: and node: or nodes: + exit:",
            )
        ]
    if _plainly_valid(data):
        return []
    from jsonschema import Draft202012Validator

    out = []
    for err in Draft202012Validator(fragment_schema()).iter_errors(data):
        where = tuple(err.absolute_path)
        said = json_path(where)[1:].lstrip(".") or "the fragment"
        if err.validator == "additionalProperties":
            allowed = [
                k for k in err.schema["properties"] if where != ("node",) or k not in SUPPLIED
            ]
            for key in (k for k in err.instance if k not in err.schema["properties"]):
                line, col = pos.at((*where, key))
                msg = unknown_key(str(key), allowed, said)
                out.append(
                    Finding(file, line, "error", "unknown-key", msg, None, col,
                            json_path((*where, key)))
                )  # fmt: skip
            continue
        line, col = pos.at(where)
        msg = err.message
        if err.validator == "oneOf":
            msg = "a fragment holds either node: (one node) or nodes: and exit: (a loop)"
        elif err.validator == "not" and where == ("node",):
            banned = [k for k in SUPPLIED if k in data["node"]]
            line, col = pos.at(("node", *banned[:1]))
            msg = (
                "a single-node fragment may not set id, depends_on, feedback, cwd or "
                "worktree — the using node supplies them"
            )
        out.append(
            Finding(
                file, line, "error", "fragment-schema", f"{said}: {msg}", None, col,
                json_path(where),
            )
        )  # fmt: skip
    return out


def _plainly_valid(data: Mapping[str, object]) -> bool:
    """The schema's verdict for a sound fragment, without importing jsonschema (lint stays
    fast); anything unusual is left to the full check, which explains it."""
    keys = set(data)
    name = data.get("fragment")
    text = data.get("description")
    subs = data.get("substitutions", [])
    if not (
        keys <= _TOP
        and isinstance(name, str)
        and NAME.fullmatch(name)
        and isinstance(text, str)
        and text.strip()
        and len(text) <= 500
        and isinstance(subs, list)
        and len(subs) == len(set(map(str, subs))) <= 50
        and all(isinstance(p, str) and NAME.fullmatch(p) and len(p) <= 64 for p in subs)
    ):
        return False
    if "node" in data:
        node = data["node"]
        return (
            keys.isdisjoint({"nodes", "exit"})
            and isinstance(node, dict)
            and set(node) <= node_keys() - set(SUPPLIED)
        )
    nodes, exit_ = data.get("nodes"), data.get("exit")
    return (
        isinstance(nodes, list)
        and 1 <= len(nodes) <= 100
        and all(
            isinstance(n, dict)
            and isinstance(n.get("id"), str)
            and NAME.fullmatch(n["id"])
            and set(n) <= node_keys()
            for n in nodes
        )
        and isinstance(exit_, str)
        and NAME.fullmatch(exit_) is not None
    )
