"""Notes on `refs/omg/notes/<run>/<id>`: written once per id whoever races to write it, never
on the run branch, fetched and read back, and dropped (here and there) once folded in."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitkit import UserCheckout, ci_checkout, clone, make_run_dir, runner

from omg.errors import GitError, MovedOn
from omg.git import RunRepo

REF = "refs/omg/notes/r1/refused-c9001"


def _run(run_repo: RunRepo, user: UserCheckout) -> str:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    head = run_repo.commit_run_dir("r1", run_dir, "leg 1", expect_parent=None)
    run_repo.push("origin", ["refs/heads/omg/runs/r1"])
    return head


def test_a_note_is_written_once_whoever_races_to_write_it(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    head = _run(run_repo, user)
    jobs = []
    for n in (1, 2):  # two runs of the same comment job, each in its own fresh checkout
        ci_checkout(origin, tmp_path / f"job{n}")
        job = runner(tmp_path / f"job{n}")
        assert job.fetch_notes("origin", "r1") == {}
        sha = job.record_note("r1", "refused-c9001", f'{{"try": {n}}}\n'.encode(), f"try {n}")
        jobs.append((job, sha))
    (first, sha1), (second, _) = jobs
    first.push("origin", [f"{REF}:{REF}"])
    with pytest.raises(MovedOn):
        second.push("origin", [f"{REF}:{REF}"])
    assert run_repo.fetch_notes("origin", "r1") == {"refused-c9001": sha1}
    assert run_repo.read_note(sha1) == b'{"try": 1}\n'
    run_repo.fetch("origin", ["refs/heads/omg/runs/r1"])
    assert run_repo.remote_run_head("origin", "r1") == head  # the run branch never moved


def test_a_clone_fetches_no_notes_and_folded_notes_are_dropped_there_and_here(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    _run(run_repo, user)
    for nid in ("refused-c1", "refused-c2"):
        run_repo.record_note("r1", nid, b"{}\n", nid)
        ref = f"refs/omg/notes/r1/{nid}"
        run_repo.push("origin", [f"{ref}:{ref}"])
    fresh = clone(origin, tmp_path / "fresh")
    assert not [r for r in fresh.references if "notes" in r]  # outside refs/heads: never cloned
    assert sorted(run_repo.fetch_notes("origin", "r1")) == ["refused-c1", "refused-c2"]
    run_repo.drop_notes("origin", "r1", ["refused-c1"])
    assert sorted(run_repo.fetch_notes("origin", "r1")) == ["refused-c2"]
    assert sorted(run_repo.local_notes("r1")) == ["refused-c2"]
    with pytest.raises(GitError, match="never deletes remote branches"):
        run_repo.push("origin", [":refs/heads/omg/runs/r1"])


def test_a_note_id_that_cannot_name_a_ref_is_refused(run_repo: RunRepo) -> None:
    with pytest.raises(GitError, match="note id 'a/b' cannot be part of a git branch name"):
        run_repo.record_note("r1", "a/b", b"{}", "bad")


def test_what_is_not_a_note_is_refused_when_read(
    run_repo: RunRepo, user: UserCheckout, origin: str
) -> None:
    head = _run(run_repo, user)  # a run-branch commit: no note.json in it
    with pytest.raises(GitError, match=r"holds no note\.json"):
        run_repo.read_note(head)
