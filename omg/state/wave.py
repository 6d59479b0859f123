"""A fan-out wave's merge: the node events its matrix jobs published, in one deterministic
order, numbered after the run branch's last event — pure, and graph-free (the caller gives the
order of the entries)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from omg.state.events import Event

#: A matrix job's own leg bookkeeping: the fold writes one pair for the whole wave instead.
BOOKKEEPING = ("run_started", "run_finished")


def merge_wave(
    base_seq: int, leg: int, published: Mapping[str, Sequence[Event]], order: Sequence[str]
) -> list[Event]:
    """The events of each entry's run past ``base_seq`` (what its job added), entries in
    ``order`` — never the order the jobs finished or were fetched in — without the jobs' own
    ``run_started``/``run_finished``, renumbered ``base_seq + 1 …`` and put in leg ``leg``."""
    rank = {node: i for i, node in enumerate(order)}
    unknown = sorted(set(published) - set(rank))
    if unknown:
        raise ValueError(f"entries not in the graph order: {', '.join(unknown)}")
    out: list[Event] = []
    for entry in sorted(published, key=rank.__getitem__):
        for ev in published[entry]:
            if int(ev["seq"]) <= base_seq or ev["event"] in BOOKKEEPING:
                continue
            out.append({**ev, "seq": base_seq + len(out) + 1, "leg": leg})
    return out
