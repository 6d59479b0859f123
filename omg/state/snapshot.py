"""The snapshot, state.json: one byte form per state, written atomically, and read back checked
against schemas/state.schema.json (``state.verify`` compares it with the fold of the events)."""

from __future__ import annotations

import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any, cast

from omg import strictjson
from omg.fastschema import Check, compile_schema
from omg.records import State
from omg.state.fold import STATE_SCHEMA
from omg.state.verify import Damaged

STATE = "state.json"

_COMPACT = {
    "sort_keys": True, "ensure_ascii": False, "separators": (", ", ": "), "allow_nan": False,
}  # fmt: skip
#: Top-level maps written one entry per line, so a state diff shows one line per changed node.
_LINE_PER_ENTRY = ("nodes", "gates", "worktrees")


def _compact(value: Any) -> str:
    return json.dumps(value, **_COMPACT)  # type: ignore[arg-type]


def canonical_json(
    value: Any, encoder: SnapshotEncoder | None = None, touched: frozenset[str] | None = None
) -> str:
    """One byte form per value: sorted keys, UTF-8, a trailing newline.

    A top-level object puts each key on its own line, and each entry of ``nodes``, ``gates``
    and ``worktrees`` on its own line, compact within — readable in a git diff, and encoded
    by the C encoder (an indented dump is ~10x slower on a large run). With an ``encoder``,
    only the ``touched`` node records (and small fields) are re-encoded; None means all.
    """
    if not isinstance(value, dict):
        return _compact(value) + "\n"
    cache = encoder.cache if encoder is not None else {}
    lines = []
    for key in sorted(value):
        v = value[key]
        if key in _LINE_PER_ENTRY and isinstance(v, dict) and v:
            parts = []
            for k in sorted(v):
                ck = f"{key}\0{k}"
                text = (
                    cache.get(ck)
                    if key == "nodes" and touched is not None and k not in touched
                    else None
                )
                if text is None:
                    text = cache[ck] = f"    {json.dumps(k)}: {_compact(v[k])}"
                parts.append(text)
            lines.append(f"  {json.dumps(key)}: {{\n" + ",\n".join(parts) + "\n  }")
        elif key == "graph":
            text = cache.get("graph") if touched is not None else None
            if text is None:
                text = cache["graph"] = _compact(v)
            lines.append(f'  "graph": {text}')
        else:
            lines.append(f"  {json.dumps(key)}: {_compact(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


class SnapshotEncoder:
    """Remembers encoded node records and the graph between writes of one leg's state.json."""

    def __init__(self) -> None:
        self.cache: dict[str, str] = {}


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via temp file + rename.

    The rename makes every write atomic: a reader (or a leg killed at any point) sees the old
    file or the new one, never a mix. Durability is the checkpoint's job (``RunDir.checkpoint``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


@cache
def _state_schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMAS / "state.schema.json").read_text("utf-8"))
    return schema


@cache
def _state_is_valid() -> Check:
    return compile_schema(_state_schema())


def shape_problem(st: State) -> str | None:
    """The first way ``st`` breaks schemas/state.schema.json (None when it does not).

    The compiled check answers a sound snapshot; jsonschema is imported only to explain damage.
    """
    if _state_is_valid()(st):
        return None
    import jsonschema

    validator = jsonschema.Draft202012Validator(_state_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(st))
    if error is None:
        return None
    path = [str(p) for p in error.absolute_path]
    owner = f" of node {path[1]!r}" if path[:1] == ["nodes"] and len(path) > 1 else ""
    field = path[2:] if owner else path
    if error.validator == "required":
        missing = str(error.message).split("'")[1]
        return f"field {'.'.join([*field, missing])!r}{owner} is missing"
    return f"field {'.'.join(field) or '(top level)'!r}{owner} is wrong: {error.message}"


def parse_state(data: bytes, path: Path, fix: str) -> State:
    """The snapshot read from ``path`` as ``data``, checked for shape and schema version; damage
    is a Damaged naming ``path`` and the ``fix``."""
    try:
        st = strictjson.loads(data)
    except UnicodeDecodeError as exc:
        at = data.count(b"\n", 0, exc.start) + 1
        raise Damaged(path, at, "is not valid JSON (not UTF-8 text)", fix) from None
    except json.JSONDecodeError as exc:
        raise Damaged(
            path, exc.lineno, f"is not valid JSON ({exc.msg}): the snapshot is "
            "damaged", fix,
        ) from None  # fmt: skip
    except ValueError as exc:  # NaN, Infinity, a number past its range, nested too deep
        raise Damaged(path, None, f"is not a state omg wrote: {exc}", fix) from None
    if not isinstance(st, dict) or "nodes" not in st:
        raise Damaged(path, None, "is not an omg state file (no nodes)", fix)
    if st.get("schema") != STATE_SCHEMA:
        raise Damaged(
            path, None, f"has state schema {st.get('schema')!r}, but this omg "
            f"understands schema {STATE_SCHEMA}: it was written by a different omg version",
            f"upgrade omg if another version wrote it; else {fix}",
        )  # fmt: skip
    problem = shape_problem(cast(State, st))
    if problem is not None:
        raise Damaged(path, None, f"is damaged: {problem}", fix)
    return cast(State, st)
