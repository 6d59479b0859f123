"""Notes: events recorded between legs (a refused decision, a superseded run, a dispatch)."""

from __future__ import annotations

from omg.errors import StateError
from omg.leg.start import Environment, snapshot_mask
from omg.state import State
from omg.state.events import EventFields, EventKind
from omg.state.recorder import Recorder
from omg.state.store import RunDir, catch_up, load_run

#: Events that record a fact about a run without moving it: a decision's state is still current.
STANDING = ("decision_refused", "leg_dispatched")


def note(run_id: str, env: Environment, kind: EventKind, fields: EventFields, what: str) -> State:
    """Append one event to the run (under its lock), then commit and push it with the state.

    It belongs to the run's latest leg; compare-and-swap holds as for a leg, so a note never
    lands on a run another leg advanced meanwhile.
    """
    rundir = RunDir(env.runs_dir / run_id)
    if not rundir.exists():
        raise StateError(f"no run {run_id!r} in {env.runs_dir} to record {kind} on")
    rundir.lock()
    try:
        state, last = load_run(rundir)
        catch_up(rundir, state)
        rundir.mask = snapshot_mask(env, state["graph"])
        rec = Recorder(rundir, state, leg=max(1, len(state["legs"])), last_seq=last)
        if env.commits is not None:
            env.commits.before_leg(rec)
        rec.emit(kind, fields)
        rec.flush()
        if env.commits is not None:
            env.commits.noted(rec, what)
        return rec.state
    finally:
        rundir.close()


def progress_seq(rundir: RunDir) -> int:
    """The seq of the run's last event that moved it (anything but a standing note)."""
    seq = 0
    for ev in rundir.read_events():
        if ev["event"] not in STANDING and ev["event"] != "node_started":
            seq = int(ev["seq"])
    return seq
