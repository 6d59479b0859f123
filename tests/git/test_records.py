"""Fan-out records on `refs/omg/fanout/<run>/<entry>`: published by compare-and-swap on that
ref alone, fetched and listed, deleted (the only remote deletion omg makes), taken in by diff."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitkit import UserCheckout, ci_checkout, make_run_dir, runner

from omg.errors import GitError
from omg.git import RunRepo

REF = "refs/omg/fanout/r1/a"


def _base(run_repo: RunRepo, user: UserCheckout) -> str:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    base = run_repo.commit_run_dir("r1", run_dir, "leg 1", expect_parent=None)
    run_repo.push("origin", ["refs/heads/omg/runs/r1"])
    return base


def test_two_jobs_publishing_one_entry_from_the_same_view_settle_by_compare_and_swap(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    base = _base(run_repo, user)
    jobs = []
    for n in (1, 2):
        ci_checkout(origin, tmp_path / f"job{n}")
        job = runner(tmp_path / f"job{n}")
        job.fetch("origin", ["refs/heads/omg/runs/r1"])
        assert job.fetch_records("origin", "r1") == {}
        rd = make_run_dir(tmp_path / f"job{n}" / ".omg" / "runs" / "r1", seq=n + 1)
        jobs.append((job, job.record_entry("r1", "a", rd, f"job {n}", parents=[base])))
    first, second = jobs
    first[0].push("origin", [f"{REF}:{REF}"])
    with pytest.raises(GitError, match="another leg advanced"):
        second[0].push("origin", [f"{REF}:{REF}"])
    assert run_repo.fetch_records("origin", "r1") == {"a": first[1]}
    assert run_repo.parents(first[1]) == [base]


def test_a_record_built_on_what_the_remote_held_replaces_it(
    run_repo: RunRepo, user: UserCheckout, origin: str
) -> None:
    base = _base(run_repo, user)
    rd = user.path / ".omg" / "runs" / "r1"
    stale = run_repo.record_entry("r1", "a", rd, "old wave", parents=[base])
    run_repo.push("origin", [f"{REF}:{REF}"])
    make_run_dir(rd, seq=9)
    fresh = run_repo.record_entry("r1", "a", rd, "new wave", parents=[base, stale])
    run_repo.push("origin", [f"{REF}:{REF}"])  # fast-forwards only the value it saw
    assert run_repo.fetch_records("origin", "r1") == {"a": fresh}


def test_records_are_deleted_and_no_other_remote_ref_can_be(
    run_repo: RunRepo, user: UserCheckout, origin: str
) -> None:
    base = _base(run_repo, user)
    rd = user.path / ".omg" / "runs" / "r1"
    run_repo.record_entry("r1", "a", rd, "a", parents=[base])
    run_repo.push("origin", [f"{REF}:{REF}"])
    run_repo.drop_records("origin", "r1", ["a"])
    assert run_repo.fetch_records("origin", "r1") == {}  # and the tracking copy is gone too
    with pytest.raises(GitError, match="never deletes remote branches"):
        run_repo.push("origin", [":refs/omg/base/r1/lane"])


def test_what_a_record_changed_is_taken_in_deletions_included(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    rd = make_run_dir(user.path / ".omg" / "runs" / "r1", n_artifacts=2)
    (rd / "failed").mkdir()
    (rd / "failed" / "n1.out").write_text("old failure\n")
    base = run_repo.commit_run_dir("r1", rd, "base", expect_parent=None)
    (rd / "failed" / "n1.out").unlink()
    (rd / "artifacts" / "n1.out").write_text("passed now\n")
    (rd / "sessions").mkdir()
    (rd / "sessions" / "s.jsonl").write_text("{}\n")
    (rd / "state.json").write_text('{"seq": 99}\n')
    record = run_repo.record_entry("r1", "n1", rd, "job", parents=[base])
    into = tmp_path / "fold"
    run_repo.restore_run_dir("r1", into, ref=base)
    touched = run_repo.copy_changes(into, base, record, skip=frozenset({"state.json"}))
    assert sorted(touched) == ["artifacts/n1.out", "failed/n1.out", "sessions/s.jsonl"]
    assert (into / "artifacts" / "n1.out").read_text() == "passed now\n"
    assert not (into / "failed" / "n1.out").exists()
    assert (into / "state.json").read_text() != '{"seq": 99}\n'


def test_a_lane_branch_only_moves_forward(run_repo: RunRepo, user: UserCheckout) -> None:
    rd = make_run_dir(user.path / ".omg" / "runs" / "r1")
    one = run_repo.commit_run_dir("r1", rd, "one", expect_parent=None)
    make_run_dir(rd, seq=2)
    two = run_repo.commit_run_dir("r1", rd, "two", expect_parent=one)
    run_repo.set_branch("omg/work/r1/w", one)
    run_repo.set_branch("omg/work/r1/w", two)
    run_repo.set_branch("omg/work/r1/w", one)  # behind: kept where it is
    assert str(user.repo.references["refs/heads/omg/work/r1/w"].target) == two
    make_run_dir(rd, seq=3)
    other = run_repo.record_entry("r1", "x", rd, "elsewhere", parents=[one])
    with pytest.raises(GitError, match="never rewrites a lane"):
        run_repo.set_branch("omg/work/r1/w", other)
