"""The run state: the fold of events into state.json, the run directory store, the recorder."""

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
