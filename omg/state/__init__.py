"""The run state: the fold of events into state.json, the run directory store, the recorder.

- ``fold`` (graph-free, pure): events folded into state.json.
- ``store``: the run directory — its files, the paths written since the last commit, the leg
  lock, catch-up — with ``snapshot``, ``chunks`` and ``holder``:
- ``snapshot``: state.json — one byte form, written atomically, read back checked against its
  schema.
- ``chunks``: the event log's files — events.jsonl and its chunks, appended one line per write,
  read back each line checked.
- ``holder``: which process holds a leg — a process as a later one recognises it, and whether it
  still runs.
- ``verify``: the record check — every line of every chunk, seq running on across them, run id,
  and state.json against the fold at its seq.
- ``vouched``: the verified point — the log's files and bytes a check covered, their sha256 and
  fold, kept in ``verified.json`` beside the record; ``verify_from``, the check from it: those
  bytes hashed, only the lines after them checked and folded.
- ``kept``: the ledger kept with the verified point — its rows folded up to it, in
  ``ledger.json``, named by the point; ``run_ledger``, the rows folded on from them.
- ``artifacts``: each passed node's reply file against the size and sha256 its ``node_passed``
  recorded.
- ``log``: the event log as one stream — each line as recorded, read only once the record is
  verified; ``Follow``, what a running leg appends, the record verified again whenever it
  changes, until the leg records its end or no process holds its lock.
- ``runid``: the one run-id rule.
- ``recorder``: the one writer.
- ``events``: typed events — ``EventFields``, and ``Event``, one events.jsonl line as read back,
  emitted and folded.
- ``ledger`` (pure): one row per execution.
- ``wave`` (pure): a fan-out wave's events merged in graph order.
"""

from omg.records import NO_RECORD, GateRecord, LaneRecord, LegRecord, NodeRecord, State
from omg.state.events import Event
from omg.state.fold import apply, diff, empty_state, fold, stable_view

__all__ = [
    "NO_RECORD",
    "Event",
    "GateRecord",
    "LaneRecord",
    "LegRecord",
    "NodeRecord",
    "State",
    "apply",
    "diff",
    "empty_state",
    "fold",
    "stable_view",
]
