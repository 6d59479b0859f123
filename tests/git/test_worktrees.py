"""Managed worktrees: idempotent acquire, commits, exact restores, cleaning without loss."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest
from gitkit import UserCheckout, ci_checkout, git, make_run_dir, tree_files

from omg.errors import GitError
from omg.git import Checkout, RunRepo, open_repo


def _lane(user: UserCheckout, run_id: str = "r1", name: str = "lane-a") -> Path:
    return user.path / ".omg" / "worktrees" / run_id / name


def test_acquire_creates_a_checkout_on_a_work_branch(run_repo: RunRepo, user: UserCheckout) -> None:
    wt = run_repo.acquire_worktree("r1", "lane-a")
    assert wt == Checkout("lane-a", _lane(user), "omg/work/r1/lane-a")
    assert (wt.path / "README.md").read_text() == "hello\n"  # HEAD's commit, not the dirty file
    assert (user.path / ".omg" / ".gitignore").read_text() == "*\n"
    assert run_repo.worktree_head(wt) == git(user.path, "rev-parse", "HEAD").strip()
    assert git(wt.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "omg/work/r1/lane-a"


def test_acquire_is_idempotent_reuse_reattach_create(run_repo: RunRepo, user: UserCheckout) -> None:
    wt = run_repo.acquire_worktree("r1", "lane-a")
    (wt.path / "work.txt").write_text("in progress\n")
    assert run_repo.acquire_worktree("r1", "lane-a") == wt  # reuse: the edit is still there
    assert (wt.path / "work.txt").exists()
    sha = run_repo.commit_worktree(wt, "node impl")

    shutil.rmtree(wt.path)  # the next leg's runner has no directory, but the branch remains
    again = open_repo(user.path, env={})
    assert again is not None
    back = again.acquire_worktree("r1", "lane-a")
    assert back == wt and again.worktree_head(back) == sha
    assert (back.path / "work.txt").read_text() == "in progress\n"


def test_acquire_from_a_base_and_onto_an_existing_branch(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    first = user.repo.head.target
    user.repo.create_reference_direct("refs/heads/feature", first, False)
    wt = run_repo.acquire_worktree("r1", "pr", branch="feature")
    assert wt.branch == "feature" and run_repo.worktree_head(wt) == str(first)
    other = run_repo.acquire_worktree("r1", "b", base="feature")
    assert other.branch == "omg/work/r1/b"
    with pytest.raises(GitError, match=r"not a commit"):
        run_repo.acquire_worktree("r1", "c", base="no-such-rev")


def test_acquire_refuses_a_branch_checked_out_elsewhere(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    with pytest.raises(GitError, match=r"branch main is checked out elsewhere"):
        run_repo.acquire_worktree("r1", "pr", branch="main")


def test_acquire_refuses_a_foreign_directory(run_repo: RunRepo, user: UserCheckout) -> None:
    lane = _lane(user)
    lane.mkdir(parents=True)
    (lane / "precious.txt").write_text("not omg's")
    with pytest.raises(GitError, match=r"is not a worktree of"):
        run_repo.acquire_worktree("r1", "lane-a")
    assert (lane / "precious.txt").read_text() == "not omg's"


def test_acquire_refuses_another_repositorys_worktree(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    stranger = pygit2.init_repository(str(tmp_path / "stranger"), initial_head="main")
    tree = stranger.TreeBuilder().write()
    sig = pygit2.Signature("s", "s@x")
    first = stranger.create_commit("HEAD", sig, sig, "m", tree, [])
    _lane(user).parent.mkdir(parents=True)
    stranger.add_worktree("x", str(_lane(user)), stranger.create_branch("b", stranger[first]))
    with pytest.raises(GitError, match=r"is not a worktree of"):
        run_repo.acquire_worktree("r1", "lane-a")


def test_commit_worktree_stages_adds_edits_and_deletions(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    wt = run_repo.acquire_worktree("r1", "lane-a")
    assert run_repo.commit_worktree(wt, "nothing yet") is None
    (wt.path / "new" / "file.txt").parent.mkdir()
    (wt.path / "new" / "file.txt").write_text("new\n")
    (wt.path / "README.md").write_text("changed\n")
    (wt.path / "src" / "app.py").unlink()
    sha = run_repo.commit_worktree(wt, "impl: PASS")
    assert sha is not None and run_repo.worktree_head(wt) == sha
    files = tree_files(user.repo, sha)
    assert files == {"README.md": b"changed\n", "new/file.txt": b"new\n"}
    assert git(wt.path, "status", "--porcelain") == ""
    assert git(user.path, "rev-parse", "omg/work/r1/lane-a").strip() == sha
    assert run_repo.commit_worktree(wt, "again") is None


def test_commit_worktree_respects_gitignore(run_repo: RunRepo, user: UserCheckout) -> None:
    wt = run_repo.acquire_worktree("r1", "lane-a")
    (wt.path / ".gitignore").write_text("build/\n")
    (wt.path / "build").mkdir()
    (wt.path / "build" / "out.bin").write_text("junk")
    sha = run_repo.commit_worktree(wt, "m")
    assert sha is not None and "build/out.bin" not in tree_files(user.repo, sha)


def test_restore_worktree_in_a_fresh_clone_at_exactly_the_recorded_commit(
    run_repo: RunRepo, user: UserCheckout, bare: Path, tmp_path: Path
) -> None:
    user.repo.remotes.create("origin", f"file://{bare}")
    run_repo.push("origin", ["main"])
    wt = run_repo.acquire_worktree("r1", "lane-a")
    (wt.path / "a.txt").write_text("one\n")
    recorded = run_repo.commit_worktree(wt, "impl round 1")
    (wt.path / "a.txt").write_text("two\n")
    later = run_repo.commit_worktree(wt, "impl round 2")
    assert recorded and later
    run_repo.push("origin", [f"refs/heads/{wt.branch}"])

    ci_checkout(f"file://{bare}", tmp_path / "ci")
    leg = open_repo(tmp_path / "ci", env={})
    assert leg is not None
    leg.fetch("origin", ["+refs/heads/omg/work/r1/*:refs/remotes/origin/omg/work/r1/*"])
    with pytest.raises(GitError, match=r"is not a commit"):
        leg.restore_worktree("r1", "lane-a", "0" * 40)
    back = leg.restore_worktree("r1", "lane-a", recorded)
    assert back.branch == "omg/work/r1/lane-a"
    assert back.path == tmp_path / "ci" / ".omg" / "worktrees" / "r1" / "lane-a"
    assert leg.worktree_head(back) == recorded
    assert git(tmp_path / "ci", "rev-parse", "omg/work/r1/lane-a").strip() == recorded
    assert (back.path / "a.txt").read_text() == "one\n"
    assert git(back.path, "status", "--porcelain") == ""
    assert leg.restore_worktree("r1", "lane-a", recorded) == back  # idempotent

    forward = leg.restore_worktree("r1", "lane-a", later)  # fast-forward an existing checkout
    assert leg.worktree_head(forward) == later and (back.path / "a.txt").read_text() == "two\n"
    # Back to what the run recorded (round 2 never settled, or its leg lost the run): the
    # commits it holds beyond the record are kept under kept/, never dropped.
    again = leg.restore_worktree("r1", "lane-a", recorded)
    assert leg.worktree_head(again) == recorded and (back.path / "a.txt").read_text() == "one\n"
    kept = f"kept/omg-work-r1-lane-a-{later[:7]}"
    assert git(tmp_path / "ci", "rev-parse", kept).strip() == later
    assert git(back.path, "status", "--porcelain") == ""


def test_a_branch_of_the_user_is_never_moved_back(run_repo: RunRepo, user: UserCheckout) -> None:
    base = str(user.repo.head.target)
    wt = run_repo.acquire_worktree("r1", "pr", branch="feature")
    (wt.path / "a.txt").write_text("one\n")
    later = run_repo.commit_worktree(wt, "m")
    assert later
    with pytest.raises(GitError, match=r"never recorded.*will not drop those commits"):
        run_repo.restore_worktree("r1", "pr", base, branch="feature")
    assert run_repo.worktree_head(wt) == later


def test_restore_worktree_refuses_to_overwrite_uncommitted_changes(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    wt = run_repo.acquire_worktree("r1", "lane-a")
    start = run_repo.worktree_head(wt)
    (wt.path / "a.txt").write_text("one\n")
    later = run_repo.commit_worktree(wt, "m")
    assert later
    user.repo.references["refs/heads/omg/work/r1/lane-a"].set_target(start)
    git(wt.path, "reset", "--hard", start)
    (wt.path / "README.md").write_text("dirty\n")
    with pytest.raises(GitError, match=r"uncommitted changes"):
        run_repo.restore_worktree("r1", "lane-a", later)
    assert (wt.path / "README.md").read_text() == "dirty\n"


def test_clean_removes_empty_worktrees_and_keeps_work(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    empty = run_repo.acquire_worktree("r1", "empty")
    busy = run_repo.acquire_worktree("r1", "busy")
    (busy.path / "x.txt").write_text("x\n")
    busy_head = run_repo.commit_worktree(busy, "work")
    dirty = run_repo.acquire_worktree("r1", "dirty")
    (dirty.path / "README.md").write_text("uncommitted\n")
    other_run = run_repo.acquire_worktree("r2", "empty")

    notes = run_repo.clean("r1")
    assert not empty.path.exists() and not busy.path.exists()
    assert "branch omg/work/r1/empty deleted (no new commits)" in notes
    assert git(user.path, "branch", "--list", "omg/work/r1/empty") == ""
    assert git(user.path, "rev-parse", "omg/work/r1/busy").strip() == busy_head
    assert any(
        n.startswith(f"branch omg/work/r1/busy kept at {busy_head[:12]}: it carries commits")
        for n in notes
    ), notes
    assert (dirty.path / "README.md").read_text() == "uncommitted\n"
    assert any("worktree 'dirty' kept" in n for n in notes), notes
    assert other_run.path.exists()
    registered = git(user.path, "worktree", "list", "--porcelain")
    assert str(empty.path) not in registered and str(busy.path) not in registered
    assert str(dirty.path) in registered and len(user.repo.list_worktrees()) == 2

    # the retained branch re-attaches later, with its commit
    again = run_repo.acquire_worktree("r1", "busy")
    assert run_repo.worktree_head(again) == busy_head


def test_clean_with_a_remote_deletes_only_pushed_branches(
    run_repo: RunRepo, user: UserCheckout, bare: Path
) -> None:
    user.repo.remotes.create("origin", f"file://{bare}")
    pushed = run_repo.acquire_worktree("r1", "pushed")
    (pushed.path / "p.txt").write_text("p\n")
    run_repo.commit_worktree(pushed, "p")
    run_repo.push("origin", [f"refs/heads/{pushed.branch}"])
    local = run_repo.acquire_worktree("r1", "local")
    (local.path / "l.txt").write_text("l\n")
    run_repo.commit_worktree(local, "l")
    run_repo.push("origin", [f"refs/heads/{local.branch}"])
    (local.path / "l.txt").write_text("l2\n")
    unpushed = run_repo.commit_worktree(local, "l2")  # one commit beyond what origin has
    assert unpushed

    notes = run_repo.clean("r1", remote="origin")
    assert "branch omg/work/r1/pushed deleted (its commits are on 'origin')" in notes
    assert git(user.path, "rev-parse", "omg/work/r1/local").strip() == unpushed
    assert any("omg/work/r1/local kept" in n and "not on remote 'origin'" in n for n in notes)
    assert not (user.path / ".omg" / "worktrees" / "r1" / "local").exists()


def test_clean_never_deletes_a_branch_omg_did_not_create(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    user.repo.create_reference_direct("refs/heads/feature", user.repo.head.target, False)
    run_repo.acquire_worktree("r1", "pr", branch="feature")
    notes = run_repo.clean("r1")
    assert "branch feature kept: omg did not create it" in notes
    assert git(user.path, "branch", "--list", "feature").strip() == "feature"


def test_worktree_operations_leave_the_user_checkout_alone(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    before = user.snapshot()
    run_repo.commit_run_dir("r1", make_run_dir(user.path / ".omg/runs/r1"), "m", expect_parent=None)
    wt = run_repo.acquire_worktree("r1", "lane-a")
    (wt.path / "README.md").write_text("lane edit\n")
    (wt.path / "new.txt").write_text("new\n")
    sha = run_repo.commit_worktree(wt, "m")
    assert sha
    run_repo.restore_worktree("r1", "lane-a", sha)
    run_repo.clean("r1")
    assert user.snapshot() == before
