"""The lease ref, how a local run branch stands to its remote, setting a local record aside,
and the stale locks a killed git write leaves on a run's refs."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from gitkit import UserCheckout, clone, git, make_run_dir, runner

from omg.errors import GitError, MovedOn, Unreadable
from omg.git import RunRepo
from omg.git.names import run_refspecs

RUN_REF = "refs/heads/omg/runs/r1"
LEASE = "refs/omg/lease/r1"


def test_the_lease_is_a_chain_of_fast_forwards_and_two_writers_settle_by_compare_and_swap(
    run_repo: RunRepo, origin: str, tmp_path: Path
) -> None:
    run_repo.fetch("origin", run_refspecs("r1", "origin"))
    assert run_repo.lease("origin", "r1") is None  # no lease yet
    first = run_repo.put_lease("origin", "r1", b'{"n": 1}\n', "taken", parent=None)
    renewed = run_repo.put_lease("origin", "r1", b'{"n": 2}\n', "renewed", parent=first)
    assert git(Path(origin.removeprefix("file://")), "rev-parse", LEASE).strip() == renewed

    legs = []
    for name in ("a", "b"):  # two legs read the same lease, both try to take it
        clone(origin, tmp_path / name)
        leg = runner(tmp_path / name)
        leg.fetch("origin", run_refspecs("r1", "origin"))
        assert leg.lease("origin", "r1") == (renewed, b'{"n": 2}\n')
        legs.append(leg)
    won = legs[0].put_lease("origin", "r1", b'{"n": "a"}\n', "a takes it", parent=renewed)
    with pytest.raises(MovedOn):
        legs[1].put_lease("origin", "r1", b'{"n": "b"}\n', "b takes it", parent=renewed)
    run_repo.fetch("origin", run_refspecs("r1", "origin"))
    assert run_repo.lease("origin", "r1") == (won, b'{"n": "a"}\n')
    history = git(Path(origin.removeprefix("file://")), "rev-list", "--parents", LEASE)
    assert history.split("\n")[:3] == [f"{won} {renewed}", f"{renewed} {first}", first]


def test_a_lease_commit_without_a_lease_file_is_unreadable_until_deleted_there(
    run_repo: RunRepo, user: UserCheckout, origin: str
) -> None:
    """What an attacker (or another tool) may push there is never read as an empty lease; once
    deleted on the remote, no old copy of it is read here."""
    tree = user.repo.TreeBuilder().write()
    sig = pygit2.Signature("x", "x@example.com")
    junk = user.repo.create_commit(None, sig, sig, "not a lease", tree, [])
    user.repo.references.create(LEASE, junk)
    run_repo.push("origin", [f"{LEASE}:{LEASE}"])
    run_repo.fetch("origin", run_refspecs("r1", "origin"))
    with pytest.raises(Unreadable, match=r"omg-lease/r1 holds no lease\.json") as caught:
        run_repo.lease("origin", "r1")
    assert (caught.value.commit, caught.value.problem) == (str(junk), "holds no lease.json")
    pygit2.Repository(origin.removeprefix("file://")).references.delete(LEASE)  # the repair
    run_repo.fetch("origin", run_refspecs("r1", "origin"))
    assert run_repo.lease("origin", "r1") is None


def test_how_a_local_run_branch_stands_to_its_remote(
    run_repo: RunRepo, user: UserCheckout, origin: str
) -> None:
    rd = make_run_dir(user.path / ".omg" / "runs" / "r1")
    base = run_repo.commit_run_dir("r1", rd, "leg 1", expect_parent=None)
    make_run_dir(rd, seq=2)
    ahead = run_repo.commit_run_dir("r1", rd, "leg 2", expect_parent=base)
    user.repo.references.create("refs/heads/side", base)
    make_run_dir(rd, seq=3)
    assert run_repo.relation(ahead, ahead) == "same"
    assert run_repo.relation(ahead, base) == "ahead"
    assert run_repo.relation(base, ahead) == "behind"
    assert run_repo.relation(None, base) == "behind"
    sig = pygit2.Signature("x", "x@example.com")
    other = user.repo.create_commit(
        "refs/heads/side", sig, sig, "elsewhere", user.repo[base].tree.id, [base]
    )
    assert run_repo.relation(ahead, str(other)) == "diverged"


def test_keep_unpublished_sets_aside_the_commits_and_the_events_the_remote_lacks(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    rd = make_run_dir(user.path / ".omg" / "runs" / "r1")
    base = run_repo.commit_run_dir("r1", rd, "leg 1", expect_parent=None)
    run_repo.push("origin", [RUN_REF])
    clone(origin, tmp_path / "other")  # another leg advances the run from base
    other = runner(tmp_path / "other")
    other.fetch("origin", [RUN_REF])
    other.adopt_remote_run("origin", "r1")
    ord_ = make_run_dir(tmp_path / "other" / ".omg" / "runs" / "r1", seq=4)
    won = other.commit_run_dir("r1", ord_, "their leg", expect_parent=base)
    other.push("origin", [RUN_REF])

    make_run_dir(rd, seq=2)  # this clone advanced too, committed, then recorded more
    mine = run_repo.commit_run_dir("r1", rd, "my leg", expect_parent=base)
    (rd / "events.jsonl").write_text((rd / "events.jsonl").read_text() + '{"seq": 3}\n')
    run_repo.fetch("origin", run_refspecs("r1", "origin"))
    kept = run_repo.keep_unpublished("origin", "r1", rd)
    assert kept is not None and kept.startswith("kept/omg-run-r1-")
    assert run_repo.run_head("r1") is None  # the local branch was moved, not rewritten
    tip = git(user.path, "rev-parse", kept).strip()
    assert run_repo.parents(tip) == [mine]  # the events no commit held were committed first
    assert git(user.path, "show", f"{kept}:events.jsonl").endswith('{"seq": 3}\n')
    assert run_repo.adopt_remote_run("origin", "r1") == won


def test_keep_unpublished_keeps_nothing_when_the_remote_merely_extends_this_clone(
    run_repo: RunRepo, user: UserCheckout, origin: str
) -> None:
    rd = make_run_dir(user.path / ".omg" / "runs" / "r1")
    base = run_repo.commit_run_dir("r1", rd, "leg 1", expect_parent=None)
    run_repo.push("origin", [RUN_REF])
    run_repo.fetch("origin", run_refspecs("r1", "origin"))
    assert run_repo.keep_unpublished("origin", "r1", rd) is None
    assert run_repo.run_head("r1") == base


def test_stale_locks_on_the_runs_own_refs_are_cleared_and_no_other(
    run_repo: RunRepo, user: UserCheckout, origin: str
) -> None:
    rd = make_run_dir(user.path / ".omg" / "runs" / "r1")
    run_repo.commit_run_dir("r1", rd, "leg 1", expect_parent=None)
    refs = user.path / ".git" / "refs"
    mine = [
        refs / "heads/omg/runs/r1.lock",
        refs / "heads/omg/work/r1/lane.lock",
        refs / "remotes/origin/omg/runs/r1.lock",
        refs / "omg/lease/r1.lock",
    ]
    theirs = [refs / "heads/omg/runs/r10.lock", refs / "heads/main.lock"]
    for path in mine + theirs:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half a ref update\n")
    make_run_dir(rd, seq=2)
    with pytest.raises(GitError, match="lock"):  # what every later leg met
        run_repo.commit_run_dir("r1", rd, "leg 2", expect_parent=run_repo.run_head("r1"))
    assert sorted(run_repo.clear_stale_locks("r1")) == sorted(str(p) for p in mine)
    assert all(p.exists() for p in theirs)
    run_repo.commit_run_dir("r1", rd, "leg 2", expect_parent=run_repo.run_head("r1"))
    assert run_repo.clear_stale_locks("r1") == []


def test_a_stale_index_lock_of_the_runs_lane_is_cleared(run_repo: RunRepo, user: UserCheckout):
    wt = run_repo.acquire_worktree("r1", "lane")
    other = run_repo.acquire_worktree("r2", "lane")
    admin = Path(pygit2.Repository(str(wt.path)).path)
    (admin / "index.lock").write_text("")
    (Path(pygit2.Repository(str(other.path)).path) / "index.lock").write_text("")
    (wt.path / "a.txt").write_text("a\n")
    with pytest.raises(GitError):
        run_repo.commit_worktree(wt, "m")
    assert run_repo.clear_stale_locks("r1") == [str(admin / "index.lock")]
    assert run_repo.commit_worktree(wt, "m")


def _take(args: tuple[str, str, str, int]) -> bool:
    """In a process of its own: one leg's attempt to take the lease from ``parent``."""
    checkout, remote, parent, n = args
    leg = runner(Path(checkout))
    try:
        leg.put_lease(remote, "r1", f'{{"leg": {n}}}\n'.encode(), f"leg {n}", parent=parent)
    except MovedOn:
        return False
    return True


def test_two_legs_taking_one_lease_at_once_never_both_win_on_a_remote_on_this_machine(
    run_repo: RunRepo, origin: str, tmp_path: Path
) -> None:
    """libgit2 moves a local remote's ref by force once its own check passed; omg's push checks
    again where the ref moves, so pushes that all checked at once still settle one winner."""
    import multiprocessing

    parent = run_repo.put_lease("origin", "r1", b"{}\n", "first", parent=None)
    checkouts = []
    for n in range(3):
        clone(origin, tmp_path / f"leg{n}")
        leg = runner(tmp_path / f"leg{n}")
        leg.fetch("origin", run_refspecs("r1", "origin"))
        checkouts.append(str(tmp_path / f"leg{n}"))
    bare = Path(origin.removeprefix("file://"))
    with multiprocessing.get_context("fork").Pool(3) as pool:
        for _ in range(8):
            won = pool.map(_take, [(c, "origin", parent, n) for n, c in enumerate(checkouts)])
            assert won.count(True) == 1, won
            tip = git(bare, "rev-parse", LEASE).strip()
            assert git(bare, "rev-parse", f"{tip}^").strip() == parent  # a child of the read
            parent = tip
            for c in checkouts:
                runner(Path(c)).fetch("origin", run_refspecs("r1", "origin"))
