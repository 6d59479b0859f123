"""The artifact check (omg.state.artifacts): a passed node's reply file against the size and
sha256 its node_passed recorded — a table of what is on disk and what the check says."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from omg.records import ArtifactRecord, NodeRecord, State
from omg.state import empty_state
from omg.state.artifacts import check, digest
from omg.state.verify import Damaged

SAID = b"a-said\n"


def _state(verdict: str, artifact: ArtifactRecord | None) -> State:
    st = empty_state()
    rec: NodeRecord = {
        "verdict": verdict,  # type: ignore[typeddict-item]
        "round": 0,
        "attempts": 1,
        "cost_usd": 0.0,
        "cost_unknown": False,
    }
    if artifact is not None:
        rec["artifact"] = artifact
    st["nodes"]["a"] = rec
    return st


CASES = [
    # (why, on disk, the record, verdict, contents checked, what the check says: None = sound)
    ("as written", SAID, digest(SAID), "PASS", True, None),
    ("an empty reply has no file", None, digest(b""), "PASS", True, None),
    ("an empty reply, its path asked for", b"", digest(b""), "PASS", True, None),
    ("deleted", None, digest(SAID), "PASS", True, "is missing"),
    ("deleted, the listing", None, digest(SAID), "PASS", False, "is missing"),
    ("emptied", b"", digest(SAID), "PASS", True, "holds 0 bytes"),
    ("grown", SAID + b"more", digest(SAID), "PASS", False, "holds 11 bytes"),
    ("edited, same size", b"a-lied\n", digest(SAID), "PASS", True, "was changed"),
    ("edited, same size, the listing", b"a-lied\n", digest(SAID), "PASS", False, None),
    ("a directory", "dir", digest(SAID), "PASS", True, "is not a file"),
    ("a link to the same bytes", "link", digest(SAID), "PASS", True, "is a symbolic link"),
    ("a named pipe (never waited on)", "fifo", digest(SAID), "PASS", True, "is not a file"),
    ("recorded before digests were kept", None, None, "PASS", True, None),
    ("a node that failed since", None, None, "FAIL", True, None),
]


@pytest.mark.parametrize(
    ("why", "disk", "record", "verdict", "contents", "says"), CASES, ids=[c[0] for c in CASES]
)
def test_what_the_artifact_check_says(
    tmp_path: Path,
    why: str,
    disk: bytes | str | None,
    record: ArtifactRecord | None,
    verdict: str,
    contents: bool,
    says: str | None,
) -> None:
    path = tmp_path / "r" / "artifacts" / "a.out"
    path.parent.mkdir(parents=True)
    if disk == "dir":
        path.mkdir()
    elif disk == "link":
        (tmp_path / "elsewhere").write_bytes(SAID)
        path.symlink_to(tmp_path / "elsewhere")
    elif disk == "fifo":
        os.mkfifo(path)
    elif isinstance(disk, bytes):
        path.write_bytes(disk)
    state = _state(verdict, record)
    found = check(tmp_path / "r", state, lambda _: path, contents=contents)
    if says is None:
        assert found is None
        return
    assert found is not None and found.path == path
    assert says in found.problem and "node 'a' passed" in found.problem
    assert "`git show omg/runs/r:artifacts/a.out > " in found.fix
    assert Damaged(path, None, found.problem, found.fix).where == "artifacts/a.out"
