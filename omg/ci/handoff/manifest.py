"""The hand-off manifest: what a leg's run job tells its publish job (``manifest.json``,
``schemas/handoff.schema.json``) — the run, the refs its pack moves, the pack, and what the
leg wants published — as typed records, written in one byte form and read back checked."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

from omg import strictjson
from omg.github.commitstatus import StatusState

if TYPE_CHECKING:
    import jsonschema

#: The format this omg writes and reads.
FORMAT = 1
#: The artifact directory's two files: nothing else may be in it.
MANIFEST = "manifest.json"
PACK = "objects.pack"
_SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "handoff.schema.json"

NoteEvent = Literal["leg_dispatched", "decision_refused", "run_superseded"]


class RefUpdate(TypedDict):
    """A ref the pack moves: where it stood when the leg started (None: it did not exist) and
    where the leg left it."""

    ref: str
    old: str | None
    new: str


class PackInfo(TypedDict):
    """The pack file: its name, size, SHA-256 and how many objects it holds."""

    file: str
    bytes: int
    sha256: str
    objects: int


class Comment(TypedDict):
    """The sticky comment's new body."""

    body: str


class Status(TypedDict):
    """The commit status to set (``omg/<graph>`` on the head the run judges)."""

    sha: str
    context: str
    state: StatusState
    description: str
    target_url: str


class Dispatch(TypedDict):
    """The next leg to start: a workflow file of the repository, its ref and its inputs."""

    workflow: str
    ref: str
    inputs: dict[str, str]


class Note(TypedDict):
    """A note to record about the run off its branch (``leg/notes``): its id, its event kind
    and the event's fields."""

    id: str
    event: NoteEvent
    fields: dict[str, Any]


class Publish(TypedDict):
    """What the leg wants published once its record is verified; None: nothing of that kind."""

    comment: Comment | None
    status: Status | None
    dispatch: Dispatch | None
    notes: list[Note]


class Manifest(TypedDict):
    """manifest.json: format, run, graph, leg, the commits the pack was built down to besides
    the refs' old ones (``base``), the refs, the pack, and what to publish."""

    format: int
    run_id: str
    graph: str
    leg: int
    base: list[str]
    refs: list[RefUpdate]
    pack: PackInfo
    publish: Publish
    #: a fan-out wave's matrix job: the entry (its first node) whose record this is
    entry: NotRequired[str]


def nothing() -> Publish:
    """A leg that wants nothing published."""
    return {"comment": None, "status": None, "dispatch": None, "notes": []}


def dumps(manifest: Manifest) -> bytes:
    """The one byte form: sorted keys, 2-space indent, ASCII, a final newline."""
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=True) + "\n").encode()


@cache
def _validator() -> jsonschema.Draft202012Validator:
    """The format's checker, loaded only by the jobs that read a manifest back (the publish
    job; a fan-out wave's fold, its entries'): ~40 ms a run job never pays."""
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(_SCHEMA.read_text("utf-8")))


def parse(data: bytes) -> Manifest:
    """``data`` as a manifest of this format; ValueError saying which field is wrong."""
    try:
        loaded = strictjson.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"it is not JSON omg wrote ({exc})") from None
    if isinstance(loaded, dict) and loaded.get("format") != FORMAT:
        raise ValueError(
            f"it is of format {loaded.get('format')!r}; this omg reads format {FORMAT}"
        )
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors(loaded))
    if error is not None:
        field = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ValueError(f"field {field} is wrong: {error.message[:200]}")
    return cast(Manifest, loaded)
