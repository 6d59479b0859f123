"""Commits built from the paths a leg changed: the tree a tree builder makes on the previous
commit's tree is the tree a scan of the run directory would make, through chunk boundaries,
removals, new folders, executables and files never committed; and a leg's commits after its
first write only what changed."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
from gitkit import SIG, make_repo

from omg.git import runbranch
from omg.state import empty_state
from omg.state.recorder import Recorder
from omg.state.store import RunDir


def _scan(repo: pygit2.Repository, run_dir: Path) -> pygit2.Oid:
    return runbranch.dir_tree(repo, run_dir, runbranch.TreeCache())


def _commit(repo: pygit2.Repository, rd: RunDir, changed: frozenset[str] | None) -> str:
    head = runbranch.head(repo, "refs/heads/omg/runs/r") if changed is not None else None
    return runbranch.commit(
        repo, "r", rd.path, "m", expect_parent=head, author=SIG, committer=SIG, changed=changed
    )


def test_the_built_tree_equals_a_scan_after_every_kind_of_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    rd = RunDir(tmp_path / "repo" / ".omg" / "runs" / "r")
    rd.lock()
    rec = Recorder(rd, empty_state(), leg=1)
    graph = {"name": "g", "nodes": [{"id": f"n{i}", "run": "true"} for i in range(200)]}
    rec.emit("run_started", graph=graph, graph_source="g.yaml", inputs={})  # type: ignore[arg-type]
    rd.write_payload(rd.failed("n0"), "first try failed\n")
    rd.write_payload(rd.artifact("n1"), "one\n")
    rec.flush()
    first = _commit(repo, rd, None)  # a process's first commit scans
    rd.take_changes()

    steps = [
        lambda: rd.write_payload(rd.artifact("n0"), "zero\n"),
        lambda: rd.remove_payload(rd.failed("n0")),  # failed/ is left empty: no tree entry
        lambda: rd.write_payload(rd.artifact("n1"), ""),  # an empty reply is no file
        lambda: rd.write_session("s1", b'{"turn": 1}\n'),  # a new folder
        lambda: [rec.emit("node_passed", node_id=f"n{i}", verdict="PASS") for i in range(130)],
        lambda: rec.flush(),
        lambda: (rd.path / ".state.json.tmp-x").write_text("partial"),  # never committed
        lambda: rd.write_payload(rd.feedback("n2"), "fix it\n"),
        lambda: os.chmod(rd.feedback("n2"), 0o755) or rd.changed(rd.feedback("n2")),
        lambda: rd.write_empty(rd.artifact("n1")),  # asked for by path: an empty file
    ]
    head = first
    for i, step in enumerate(steps):
        step()
        changed = rd.take_changes()
        head = _commit(repo, rd, changed)
        built = repo[head].peel(pygit2.Commit).tree_id
        assert built == _scan(repo, rd.path), f"step {i}: {sorted(changed)}"
    tree = repo[head].peel(pygit2.Commit).tree
    assert "failed" not in tree and "events" in tree and "sessions" in tree
    exe = pygit2.enums.FileMode.BLOB_EXECUTABLE
    assert tree["feedback"].peel(pygit2.Tree)["n2.out"].filemode == exe
    assert ".state.json.tmp-x" not in tree and "leg.lock" not in tree
    rd.close()


def test_a_commit_from_changes_reads_only_the_changed_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    rd = RunDir(tmp_path / "repo" / ".omg" / "runs" / "r")
    rd.lock()
    rec = Recorder(rd, empty_state(), leg=1)
    rec.emit("run_started", graph={"name": "g", "nodes": []}, inputs={})  # type: ignore[arg-type]
    for i in range(50):
        rd.write_payload(rd.artifact(f"n{i}"), f"{i}\n")
    rec.flush()
    _commit(repo, rd, None)
    rd.take_changes()
    # a file the leg did not write changes behind its back: a commit from changes never looks
    rd.artifact("n7").write_text("edited by hand\n")
    rd.write_payload(rd.artifact("n8"), "eight\n")
    head = _commit(repo, rd, rd.take_changes())
    arts = repo[head].peel(pygit2.Commit).tree["artifacts"].peel(pygit2.Tree)
    assert repo[arts["n8.out"].id].data == b"eight\n"
    assert repo[arts["n7.out"].id].data == b"7\n"  # not scanned, so not re-read
    rd.close()
