"""The fold (what `omg leg --fold` runs): a fan-out wave's published records taken into the
run branch as one leg, in graph order, then the next wave decided (dispatch it, pause at a
gate, or end the run)."""

from __future__ import annotations

from dataclasses import dataclass

from omg import matrix, strictjson
from omg.errors import GitError, OmgError
from omg.git import RunRepo
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
) -> Wave:
    """Fetch the run's records and sort them: this wave's (checked, merged) and the rest."""
    run_id = state["run_id"]
    published = repo.fetch_records(remote, run_id)
    possible = {e.node: e for e in matrix.entries(graph, state["nodes"])}
    fresh: dict[str, list[Event]] = {}
    stale: list[str] = []
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
    return Wave(base, folded, merged, tuple(stale), missing, lanes, nxt)


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
