"""A run's record as its branch holds it, taken in for the statistics: state.json caught up with
the events past it (the only folding done), checked against its schema, then its facts — or
why the record is damaged. A fetched branch is anyone's bytes: nothing in it raises."""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Protocol, cast

from omg.fastschema import Check, compile_schema
from omg.records import State
from omg.state.events import Event
from omg.state.fold import apply, empty_state
from omg.state.snapshot import SCHEMAS
from omg.stats.facts import Damaged, Malformed, RunFacts, facts


class Blobs(Protocol):
    """What a run branch's commit holds of the record (``omg.git.runscan.RunBlobs``)."""

    @property
    def run_id(self) -> str: ...
    @property
    def commit(self) -> str: ...
    @property
    def state(self) -> bytes | None: ...
    @property
    def log(self) -> tuple[bytes, ...]: ...
    @property
    def problem(self) -> str: ...


@cache
def _state_check() -> Check:
    return compile_schema(json.loads((SCHEMAS / "state.schema.json").read_text("utf-8")))


def take(blobs: Blobs) -> RunFacts | Damaged:
    """The run's facts, or what is wrong with its record."""

    def damaged(why: str) -> Damaged:
        return Damaged(blobs.run_id, blobs.commit, why)

    if blobs.problem:
        return damaged(blobs.problem)
    try:
        events = parse_log(blobs.log)
        state = _caught_up(blobs.state, events)
    except Malformed as exc:
        return damaged(str(exc))
    if not _state_check()(state):
        return damaged("state.json (caught up with its events) does not match its schema")
    if state["run_id"] != blobs.run_id:
        return damaged(f"the branch holds the record of run {state['run_id'][:100]!r}")
    try:
        return facts(state, events)
    except (Malformed, KeyError, TypeError, AttributeError, ValueError) as exc:
        return damaged(f"an event omg could not have written ({type(exc).__name__}: {exc})"[:200])


def parse_log(log: tuple[bytes, ...]) -> list[Event]:
    """The event log's lines as events, in order (seq 1, 2, 3…)."""
    lines: list[str] = []
    for part in log:
        try:
            text = part.decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("the event log is not UTF-8 text") from None
        lines += [ln for ln in text.split("\n") if ln.strip()]
    try:  # one parse for the whole log; a line that is not one JSON value spoils it
        parsed: Any = json.loads("[" + ",".join(lines) + "]")
    except (ValueError, RecursionError):
        raise Malformed("a line of the event log is not JSON") from None
    for n, ev in enumerate(parsed, 1):
        if not isinstance(ev, dict) or ev.get("seq") != n or not isinstance(ev.get("event"), str):
            raise Malformed(f"line {n} of the event log is not event {n}")
    return cast(list[Event], parsed)


def _caught_up(raw: bytes | None, events: list[Event]) -> State:
    """state.json folded on with the events past its ``seq`` (a checkpoint may lag its log),
    or the fold of the whole log when the branch holds no state.json yet."""
    if raw is None:
        state = empty_state()
    else:
        try:
            loaded: Any = json.loads(raw)
        except (ValueError, RecursionError):
            raise Malformed("state.json is not JSON") from None
        if not isinstance(loaded, dict) or not isinstance(loaded.get("seq"), int):
            raise Malformed("state.json is not a run's state")
        state = cast(State, loaded)
    if state["seq"] > len(events):
        raise Malformed(f"state.json is at seq {state['seq']}, past the log's {len(events)}")
    try:
        for ev in events[state["seq"] :]:
            apply(state, ev)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise Malformed(f"an event past state.json does not fold ({type(exc).__name__})") from None
    return state
