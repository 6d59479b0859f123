"""The fold (what `omg leg --fold` runs): a fan-out wave's records — handed off by its matrix
jobs as artifacts and verified here first (``take``), or published on refs in a trusted
one-job wave — taken into the run branch as one leg, in graph order, then the next wave
decided (dispatch it, pause at a gate, or end the run)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from omg import matrix, strictjson
from omg.ci.handoff.manifest import nothing
from omg.ci.handoff.outcome import Refused, Verified
from omg.ci.handoff.verify import Expected, verify
from omg.errors import GitError, OmgError
from omg.git.names import run_ref
from omg.git.repo import RunRepo
from omg.graph.model import Graph
from omg.kinds import Warn
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, LegEnd, resume_run
from omg.records import Fanout
from omg.state import State, fold
from omg.state.events import Event, EventFields
from omg.state.wave import BOOKKEEPING, merge_wave

#: A record's files the fold writes itself: everything else the jobs changed is taken in.
OWN_FILES = frozenset({"state.json", "events.jsonl", "events"})
#: What a matrix job may record, each about a node of its own entry.
NODE_EVENTS = frozenset({"node_started", "node_retried", "node_passed", "node_failed"})


@dataclass(frozen=True)
class Wave:
    """The records found for the wave planned at ``base``, sorted out."""

    base: str
    folded: dict[str, str]  # entry → record commit, in graph order
    events: list[Event]  # their events, merged: what the fold's leg replays
    stale: tuple[str, ...]  # records of another wave (or refused): ignored and deleted
    missing: tuple[str, ...]  # planned entries that published nothing: planned again
    lanes: dict[str, str]  # lane branch → the head its entry's job left it at
    next: matrix.Plan  # the wave after this one


def gather(
    repo: RunRepo,
    remote: str,
    graph: Graph,
    state: State,
    base: str,
    *,
    max_jobs: int | None,
    warn: Warn,
    taken: Taken | None = None,
) -> Wave:
    """Sort the run's records — ``taken`` from the entries' hand-offs, else fetched from the
    remote's refs: this wave's (checked, merged) and the rest."""
    run_id = state["run_id"]
    published = dict(taken.records) if taken else repo.fetch_records(remote, run_id)
    possible = {e.node: e for e in matrix.entries(graph, state["nodes"])}
    fresh: dict[str, list[Event]] = {}
    stale: list[str] = list(taken.refused) if taken else []
    for name, sha in sorted(published.items()):
        entry = possible.get(name)
        if entry is None or repo.parents(sha)[:1] != [base]:
            stale.append(name)
            continue
        try:
            events = _events(repo, run_id, sha)
        except (GitError, ValueError) as exc:
            warn(f"omg: warning: entry {name}'s record {sha[:12]} is unreadable ({exc}); dropped")
            stale.append(name)
            continue
        foreign = _foreign(events, state["seq"], entry.nodes)
        if foreign:
            warn(
                f"omg: warning: entry {name}'s record {sha[:12]} holds {foreign}, which is not "
                f"its nodes' ({', '.join(entry.nodes)}); dropped, and the entry is planned again"
            )
            stale.append(name)
            continue
        fresh[name] = events
    order = list(possible)  # graph order
    folded = {name: published[name] for name in order if name in fresh}
    planned = [e.node for e in matrix.plan(graph, state["nodes"], max_jobs).entries]
    missing = tuple(n for n in planned if n not in folded)
    merged = merge_wave(state["seq"] + 1, len(state["legs"]) + 1, fresh, order)
    after = fold(merged, state)  # on a copy: what the next wave is planned from
    lanes = {
        lane["branch"]: lane["commit"]
        for name, lane in after["worktrees"].items()
        if state["worktrees"].get(name) != lane
    }
    nxt = matrix.plan(graph, after["nodes"], max_jobs)
    return Wave(base, folded, merged, tuple(sorted(stale)), missing, lanes, nxt)


@dataclass(frozen=True)
class Taken:
    """The entries' hand-offs the fold verified: entry → its record's commit (its objects
    carried into the repository), the entries refused, and the seconds each verify took."""

    records: Mapping[str, str]
    refused: tuple[str, ...]
    seconds: Mapping[str, float]


def take(
    entries: Path, root: Path, run_id: str, planned: tuple[str, ...], expected: Expected, warn: Warn
) -> Taken:
    """Verify each planned entry's hand-off in ``entries`` (one directory each, named for its
    artifact) against ``expected`` — the record check, the entry named, its objects exactly
    between the refs' old commits and its tips, bounds, no link, no secret — and carry the
    objects of those that pass into the repository. A refused one lands nothing and is planned
    again; an entry with no directory published nothing (the fold says it is missing)."""
    records: dict[str, str] = {}
    refused: list[str] = []
    seconds: dict[str, float] = {}
    names = {matrix.artifact_name(run_id, e): e for e in planned}
    found = sorted(p.name for p in entries.iterdir()) if entries.is_dir() else []
    for other in (n for n in found if n not in names):
        warn(f"omg: warning: {other} is no hand-off of an entry this wave planned; ignored")
    for name, entry in names.items():
        if name not in found:
            continue
        t0 = time.perf_counter()
        verdict = verify(entries / name, root, replace(expected, entry=entry))
        if isinstance(verdict, Verified):
            why = _not_an_entry(verdict, run_id)
            if why:
                verdict.discard()
                verdict = Refused("plan", matrix.artifact_name(run_id, entry), why)
        if isinstance(verdict, Refused):
            warn(f"omg: warning: entry {entry}: {verdict.message} It is planned again.")
            refused.append(entry)
        else:
            [tip] = [m.new for m in verdict.moves if m.ref == run_ref(run_id)]
            try:
                verdict.quarantine.carry_in()
            finally:
                verdict.discard()
            records[entry] = tip
        seconds[entry] = time.perf_counter() - t0
    return Taken(records, tuple(refused), seconds)


def fold_wave(run_id: str, env: Environment, wave: Wave, stamp: EventFields) -> LegEnd:
    """Take the wave in: its files, then one leg that replays its events and runs nothing —
    it pauses at a gate (or an exhausted loop) only when the next wave is empty."""
    assert env.commits is not None, "a fold runs in a git checkout"
    commits = env.commits
    for sha in wave.folded.values():
        commits.repo.copy_changes(env.runs_dir / run_id, wave.base, sha, skip=OWN_FILES)
    commits.moved_lanes = dict(wave.lanes)
    idle = not wave.next.entries

    opts = LegOptions(only=frozenset(), pause_idle=idle)

    fanout: Fanout = {"folded": list(wave.folded)}
    if wave.missing:
        fanout["missing"] = list(wave.missing)
    if wave.stale:
        fanout["stale"] = list(wave.stale)
    return resume_run(run_id, env, opts, stamp={**stamp, "fanout": fanout}, replay=wave.events)


def drop(repo: RunRepo, remote: str, run_id: str, wave: Wave, warn: Warn) -> None:
    """Delete the records the fold took in or found stale. A failure is only warned about: a
    later fold (or the next wave's job) sees them stale and drops them."""
    try:
        repo.drop_records(remote, run_id, [*wave.folded, *wave.stale])
    except OmgError as exc:
        warn(f"omg: warning: the wave's records stay on {remote} ({exc}); the next fold drops them")


def _not_an_entry(verified: Verified, run_id: str) -> str:
    """Why a verified hand-off is no matrix job's ('' when it is one): it publishes nothing
    and moves the run branch, by one commit (the fold checks that commit's parent)."""
    if verified.publish != nothing():
        return "would publish a comment, status, dispatch or note; a matrix job publishes nothing"
    if run_ref(run_id) not in {m.ref for m in verified.moves}:
        return "does not move the run branch: it holds no record of the entry"
    return ""


def _events(repo: RunRepo, run_id: str, sha: str) -> list[Event]:
    text = repo.read_run_log(run_id, ref=sha)
    return [strictjson.line(line) for line in text.splitlines() if line.strip()]


def _foreign(events: list[Event], base_seq: int, nodes: tuple[str, ...]) -> str:
    """The first event past the base an entry's job may not have recorded ('' when none)."""
    for ev in events:
        if int(ev["seq"]) <= base_seq or ev["event"] in BOOKKEEPING:
            continue
        if ev["event"] not in NODE_EVENTS or ev.get("node_id") not in nodes:
            return f"a {ev['event']} of {ev.get('node_id', 'the run')} (seq {ev['seq']})"
    return ""
