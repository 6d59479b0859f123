"""The run job's side of a hand-off: after a leg, its new commits (the run branch's and each
lane's, down to where the leg started) as one git pack, and the manifest saying which refs
they move and what the leg wants published — written into a directory the workflow uploads."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from omg.ci.handoff.limits import Limits
from omg.ci.handoff.manifest import FORMAT, MANIFEST, PACK, Manifest, Publish, RefUpdate, dumps
from omg.errors import StateError
from omg.git.names import run_ref
from omg.git.pack import pack_of, run_refs


class HandoffError(StateError):
    """A hand-off that cannot be written (its refs, its size, its directory); nothing is."""


@dataclass(frozen=True)
class Plan:
    """What a leg started from: its run, graph and leg number, where each ref of the run stood
    (the remote's run branch and lanes, ref → commit; None or absent: none), and the commits
    its new lanes start from (the checkout's head, the head a pull request's run judges)."""

    run_id: str
    graph: str
    leg: int
    olds: Mapping[str, str | None]
    base: tuple[str, ...]
    entry: str | None = None  # a fan-out matrix job's entry, named in the manifest


def bundle(
    repo_root: Path, out: Path, plan: Plan, publish: Publish, limits: Limits | None = None
) -> Manifest:
    """Write the hand-off of the leg ``plan`` describes into the directory ``out`` (absent or
    empty): ``objects.pack`` and ``manifest.json``, the manifest last. The refs are the run
    branch and its lanes where they moved; the pack holds what their new commits reach down
    to the old ones and the base. Returns the manifest."""
    limits = limits or Limits()
    now = run_refs(repo_root, plan.run_id)
    mine = run_ref(plan.run_id)
    if mine not in now:
        raise HandoffError(
            f"run {plan.run_id} has no branch {mine} in {repo_root}: the leg committed nothing"
        )
    refs: list[RefUpdate] = []
    for ref in sorted(set(now) | {r for r, c in plan.olds.items() if c}):
        old, new = plan.olds.get(ref), now.get(ref)
        if new is not None and new != old:  # absent here: a lane this leg never fetched
            refs.append({"ref": ref, "old": old, "new": new})
    haves = sorted({*(c for c in plan.olds.values() if c), *plan.base})
    data, count = pack_of(repo_root, [r["new"] for r in refs], haves)
    if len(data) > limits.pack_bytes:
        raise HandoffError(
            f"the leg's new commits make a pack of {len(data):,} bytes, more than the "
            f"{limits.pack_bytes:,} a hand-off may carry"
        )
    manifest: Manifest = {
        "format": FORMAT,
        "run_id": plan.run_id,
        "graph": plan.graph,
        "leg": plan.leg,
        "base": sorted(set(plan.base)),
        "refs": refs,
        "pack": {
            "file": PACK,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "objects": count,
        },
        "publish": publish,
    }
    if plan.entry is not None:
        manifest["entry"] = plan.entry
    _write(out, data, dumps(manifest))
    return manifest


def _write(out: Path, pack: bytes, manifest: bytes) -> None:
    if out.is_symlink() or (out.exists() and (not out.is_dir() or any(out.iterdir()))):
        raise HandoffError(f"{out} is not an empty directory; a hand-off is written into one")
    out.mkdir(parents=True, exist_ok=True)
    for name, data in ((PACK, pack), (MANIFEST, manifest)):
        fd = os.open(out / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
