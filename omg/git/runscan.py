"""Run branches read in bulk: each run's state.json and event log, straight from its ref's tree.

``omg stats`` reads every run there is; checking a run out, or even resolving its branch by
name, per run would cost more than the reading. A run's blobs are looked up in the commit's
tree and handed back as bytes; nothing is written, no ref moves.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pygit2

from omg.git.names import RUNS

STATE = "state.json"
LOG = "events.jsonl"
CHUNKS = "events"


@dataclass(frozen=True)
class RunBlobs:
    """What a run branch's commit holds of the run's record: its state.json (None when the
    tree has none), its event log's files in order (events.jsonl, then the chunks), and why
    the tree could not be read ("" when it could)."""

    run_id: str
    commit: str
    state: bytes | None
    log: tuple[bytes, ...]
    problem: str = ""


def local_heads(repo: pygit2.Repository) -> dict[str, str]:
    """Every local run branch (``refs/heads/omg/runs/<id>``), run id → commit, by id."""
    out: dict[str, str] = {}
    for name in repo.references:
        rid = name.removeprefix(RUNS)
        if rid == name or not rid or "/" in rid:
            continue
        target = repo.references[name].resolve().target
        out[rid] = str(target)
    return dict(sorted(out.items()))


def read_all(repo: pygit2.Repository, heads: Mapping[str, str]) -> Iterator[RunBlobs]:
    """Each run's blobs at its head commit; a run whose tree is not a run's says why."""
    for rid, sha in heads.items():
        yield read(repo, rid, sha)


def read(repo: pygit2.Repository, run_id: str, sha: str) -> RunBlobs:
    """One run's blobs at commit ``sha``."""
    try:
        tree = repo[sha].peel(pygit2.Commit).tree
    except (KeyError, ValueError, pygit2.GitError):
        return RunBlobs(run_id, sha, None, (), f"{sha[:12]} is not a commit here")
    state = _blob(repo, tree, STATE)
    first = _blob(repo, tree, LOG)
    if first is None:
        return RunBlobs(run_id, sha, state, (), f"no {LOG} at {sha[:12]}")
    log = [first]
    if CHUNKS in tree:
        folder = repo[tree[CHUNKS].id]
        if not isinstance(folder, pygit2.Tree):
            return RunBlobs(run_id, sha, state, (), f"{CHUNKS} at {sha[:12]} is not a folder")
        for entry in sorted(folder, key=lambda e: e.name or ""):
            blob = repo[entry.id]
            if not isinstance(blob, pygit2.Blob):
                return RunBlobs(
                    run_id, sha, state, (), f"{CHUNKS}/{entry.name} at {sha[:12]} is not a file"
                )
            log.append(bytes(blob.data))
    return RunBlobs(run_id, sha, state, tuple(log))


def _blob(repo: pygit2.Repository, tree: pygit2.Tree, name: str) -> bytes | None:
    if name not in tree:
        return None
    obj = repo[tree[name].id]
    return bytes(obj.data) if isinstance(obj, pygit2.Blob) else None
