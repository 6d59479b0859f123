"""Notes: facts recorded about a run from outside its legs (a refused decision, a dispatch, a
supersede), each on a ref of its own so that no leg running meanwhile loses its work to them,
and folded into the run by the leg that ends next."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Required, cast

from omg import strictjson
from omg.errors import GitError, StateError
from omg.state.events import EventFields, EventKind
from omg.state.recorder import Recorder, now_iso

if TYPE_CHECKING:
    from omg.leg.commits import RunCommits
    from omg.state.store import RunDir

#: Events that record a fact about a run without moving it: a decision's state is still current.
STANDING = ("decision_refused", "leg_dispatched")
#: What a note may be, and the fields each kind carries (strings all).
FIELDS: dict[str, frozenset[str]] = {
    "decision_refused": frozenset({"node_id", "by", "reason", "command"}),
    "leg_dispatched": frozenset({"workflow_run_id", "url"}),
    "run_superseded": frozenset({"head_sha", "by", "reason"}),
}
ENVELOPE = frozenset({"event", "ts", "leg", "note"})


class NoteEvent(EventFields, total=False):
    """A note's event as recorded on its ref: its kind, time and leg, its id (``note``), its
    fields (strings); the envelope's run id and seq are given when a leg folds it in."""

    event: Required[EventKind]
    ts: Required[str]
    leg: Required[int]


@dataclass(frozen=True)
class Note:
    """One note as recorded: its id (its ref's last name) and the event it folds in as."""

    id: str
    event: NoteEvent  # event, ts, leg (the leg it was noted in), note (= id), its fields


def note(
    run_id: str,
    rundir: RunDir,
    commits: RunCommits,
    kind: EventKind,
    fields: EventFields,
    note_id: str,
    what: str,
) -> bool:
    """Record a note on its own ref (pushed, never forced); False when the run already has a
    note by that id. The run branch is not touched, so a leg running now is not disturbed; it
    folds the note in when it ends (or the next leg does)."""
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {rundir.path.parent} to record {kind} on")
    legs = len(rundir.read_state()["legs"])
    event: NoteEvent = {
        "event": kind,
        "ts": now_iso(),
        "leg": max(1, legs),
        "note": note_id,
        **fields,
    }
    data = _encode(rundir.mask.record(event))
    parse(note_id, data)  # a note this process could not fold back in is a bug: say it here
    return commits.record_note(note_id, data, what)


def parse(note_id: str, data: bytes) -> Note:
    """The note ``note_id`` holds; ValueError when it is not one omg could have written."""
    event = strictjson.loads(data)
    if not isinstance(event, dict):
        raise ValueError("a note is a JSON object")
    kind = event.get("event")
    if kind not in FIELDS:
        raise ValueError(f"{kind!r} is not an event a note records")
    extra = set(event) - ENVELOPE - FIELDS[kind]
    if extra:
        raise ValueError(f"a {kind} note carries no {', '.join(sorted(extra))}")
    if event.get("note") != note_id:
        raise ValueError(f"it names note {event.get('note')!r}, not {note_id!r}")
    leg = event.get("leg")
    if not isinstance(leg, int) or isinstance(leg, bool) or leg < 1:
        raise ValueError(f"leg {leg!r} is not a leg number")
    if not all(isinstance(event[k], str) for k in event if k != "leg"):
        raise ValueError("its fields are strings")
    return Note(note_id, cast(NoteEvent, event))  # its kind, fields and leg checked above


def pending(commits: RunCommits, warn: Callable[[str], None]) -> list[Note]:
    """The run's notes not dropped yet, oldest first; an unreadable one is warned about and
    left on its ref (a human can delete it), never folded."""
    out = []
    for nid, data in commits.notes().items():
        try:
            out.append(parse(nid, data))
        except ValueError as exc:
            warn(f"warning: note {nid} of run {commits.run_id} is not readable ({exc}); left")
    return sorted(out, key=lambda n: (n.event["ts"], n.id))


def take_in(rec: Recorder, notes: Sequence[Note]) -> list[str]:
    """Append the notes the run's events do not hold yet; the ids of all of ``notes`` (each
    is on record now, so its ref can go once a push carries the run)."""
    if not notes:
        return []
    known = {ev["note"] for ev in rec.rundir.read_events() if "note" in ev}
    fresh = [n for n in notes if n.id not in known]
    for n in fresh:
        rec.noted(n.event)
    if fresh:
        rec.flush()
        rec.rundir.checkpoint()
    return [n.id for n in notes]


def fold_pending(rec: Recorder, commits: RunCommits, warn: Callable[[str], None]) -> None:
    """At a leg's end: take in the notes recorded while it ran (or before). A failure to read
    them only delays them to the next leg; it never costs this leg its record."""
    try:
        commits.taken += take_in(rec, pending(commits, warn))
    except (GitError, StateError) as exc:
        warn(f"warning: the run's notes were not folded in ({exc}); the next leg takes them")


def progress_seq(rundir: RunDir) -> int:
    """The seq of the run's last event that moved it (anything but a standing note)."""
    seq = 0
    for ev in rundir.read_events():
        if ev["event"] not in STANDING and ev["event"] != "node_started":
            seq = int(ev["seq"])
    return seq


def _encode(event: NoteEvent) -> bytes:
    return (json.dumps(event, sort_keys=True, ensure_ascii=False) + "\n").encode()
