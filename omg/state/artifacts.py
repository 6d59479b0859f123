"""The artifact check: each passed node's reply file (``artifacts/<id>.out``) against the size
and SHA-256 its ``node_passed`` recorded, so a deleted reply is never read as an empty one and
an edited reply never reaches a dependant. Runs recorded before the digest was kept have none
on their records and are read as before."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from omg.records import ArtifactRecord, State

#: Bytes hashed at a time: a node's output may be large.
CHUNK = 1 << 20


def digest(data: bytes) -> ArtifactRecord:
    """What a node_passed records of the reply file it wrote (``data``: its bytes)."""
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


class Found(NamedTuple):
    """A damaged artifact: its file, what is wrong and the fix (the caller raises Damaged)."""

    path: Path
    problem: str
    fix: str


def check(
    run_dir: Path, state: State, path_of: Callable[[str], Path], *, contents: bool
) -> Found | None:
    """The first passed node's artifact that is not as its record says: there (or absent, for
    an empty reply), a file, of its size — and with ``contents``, of its SHA-256 (the listing
    of every run checks sizes only); None when every one is."""
    for node_id, rec in state["nodes"].items():
        want = rec.get("artifact")
        if want is None or rec["verdict"] != "PASS":
            continue  # recorded before the digest was kept, or no pass to vouch for
        path = path_of(node_id)
        problem = _problem(path, want, contents)
        if problem is not None:
            return Found(
                path,
                f"{problem}: node {node_id!r} passed with a reply of {want['bytes']:,} bytes "
                f"(sha256 {want['sha256'][:12]}…) kept in this file, which its dependants read",
                fix(run_dir, path),
            )
    return None


def fix(run_dir: Path, path: Path) -> str:
    """How to repair an artifact: restored from the run branch, or a fresh run."""
    rid, rel = run_dir.name, f"{path.parent.name}/{path.name}"
    return (
        f"restore it from the run branch (`git show omg/runs/{rid}:{rel} > {path}`; "
        f"`git log omg/runs/{rid} -- {rel}` lists the commits that hold it), or start a fresh "
        "run (`omg run GRAPH`)"
    )


def _problem(path: Path, want: ArtifactRecord, contents: bool) -> str | None:
    try:  # opened, never followed nor waited on: a link or a pipe is no artifact omg wrote
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None if want["bytes"] == 0 else "is missing"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link, not the file omg wrote"
        return f"cannot be read ({exc.strerror})"
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            return "is not a file"
        if found.st_size != want["bytes"]:
            return f"holds {found.st_size:,} bytes: it was changed after its node passed"
        if contents:
            h = hashlib.sha256()
            while chunk := os.read(fd, CHUNK):
                h.update(chunk)
            if h.hexdigest() != want["sha256"]:
                return "was changed after its node passed"
        return None
    finally:
        os.close(fd)
