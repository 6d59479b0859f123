"""Run branches read in bulk, straight from their trees: every run's state.json and event log
in order, the local branches or a remote's as fetched — reading writes nothing, and a branch
that holds no run's record says why."""

from __future__ import annotations

from pathlib import Path

import pygit2
from gitkit import SIG, UserCheckout, ci_checkout, make_run_dir, runner
from pygit2.enums import FileMode

from omg.git import RunRepo


def test_every_local_run_branch_is_read_from_its_tree(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    for rid in ("b", "a"):
        run_dir = make_run_dir(user.path / ".omg" / "runs" / rid, seq=2)
        (run_dir / "events").mkdir()
        (run_dir / "events" / "0000000003.jsonl").write_text('{"seq": 3}\n')
        (run_dir / "events" / "0000000129.jsonl").write_text('{"seq": 129}\n')
        run_repo.commit_run_dir(rid, run_dir, f"run {rid}", expect_parent=None)
    user.repo.create_reference_direct("refs/heads/omg/work/a/lane", user.repo.head.target, False)
    before = {r: str(user.repo.references[r].target) for r in user.repo.references}
    found = run_repo.run_records()
    assert [b.run_id for b in found] == ["a", "b"]  # lanes are no runs
    a = found[0]
    assert a.commit == run_repo.run_head("a") and not a.problem
    assert a.state == b'{"seq": 2}\n'
    assert a.log == (b'{"seq": 1}\n{"seq": 2}\n', b'{"seq": 3}\n', b'{"seq": 129}\n')
    assert {r: str(user.repo.references[r].target) for r in user.repo.references} == before


def tree_of(repo: pygit2.Repository, files: dict[str, bytes | dict[str, bytes]]) -> pygit2.Oid:
    tb = repo.TreeBuilder()
    for name, body in files.items():
        if isinstance(body, dict):
            tb.insert(name, tree_of(repo, body), FileMode.TREE)  # type: ignore[arg-type]
        else:
            tb.insert(name, repo.create_blob(body), FileMode.BLOB)
    return tb.write()


def branch(repo: pygit2.Repository, name: str, files: dict[str, bytes | dict[str, bytes]]) -> None:
    commit = repo.create_commit(None, SIG, SIG, "x", tree_of(repo, files), [])
    repo.create_reference_direct(f"refs/heads/omg/runs/{name}", commit, False)


def test_a_branch_holding_no_runs_record_says_why(user: UserCheckout) -> None:
    repo = user.repo
    branch(repo, "no-log", {"state.json": b"{}"})
    branch(repo, "file-chunks", {"events.jsonl": b"{}\n", "events": b"not a folder"})
    branch(repo, "folder-chunk", {"events.jsonl": b"{}\n", "events": {"0000000129.jsonl": {}}})  # type: ignore[dict-item]
    branch(repo, "no-state", {"events.jsonl": b"{}\n"})
    said = {b.run_id: b for b in runner(user.path).run_records()}
    assert said["no-log"].problem.startswith("no events.jsonl at ")
    assert (
        said["file-chunks"].problem.startswith("events at ")
        and "not a folder" in said["file-chunks"].problem
    )
    assert "is not a file" in said["folder-chunk"].problem
    assert said["no-state"].state is None and not said["no-state"].problem


def test_a_remotes_run_branches_are_read_as_fetched(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    run_repo.commit_run_dir("r1", run_dir, "run r1", expect_parent=None)
    run_repo.push("origin", ["refs/heads/omg/runs/r1"])
    laptop = tmp_path / "laptop"
    ci_checkout(origin, laptop)  # main only
    there = runner(laptop)
    assert there.run_records() == [] and there.run_records("origin") == []  # none fetched yet
    assert there.fetch_runs("origin") == {"r1": run_repo.run_head("r1")}
    [r1] = there.run_records("origin")
    assert r1.run_id == "r1" and r1.state == b'{"seq": 1}\n'
    assert there.run_head("r1") is None  # fetched into refs/remotes only
