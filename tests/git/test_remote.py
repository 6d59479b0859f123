"""Remotes over file:// and plain paths: round trips, racing legs, never forcing."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from gitkit import UserCheckout, ci_checkout, clone, git, make_run_dir, runner, tree_files

from omg.errors import GitError
from omg.git import RunRepo

RUN_REF = "refs/heads/omg/runs/r1"


def test_round_trip_through_a_bare_remote_into_a_second_clone(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1", n_artifacts=5)
    sha = run_repo.commit_run_dir("r1", run_dir, "leg 1", expect_parent=None)
    run_repo.push("origin", [f"{RUN_REF}:{RUN_REF}"])
    assert run_repo.remote_run_head("origin", "r1") == sha

    other = ci_checkout(origin, tmp_path / "clone")  # a later leg on another machine
    leg2 = runner(tmp_path / "clone")
    assert leg2.remote_run_head("origin", "r1") is None
    leg2.fetch("origin", [RUN_REF])
    assert leg2.remote_run_head("origin", "r1") == sha
    assert leg2.run_head("r1") is None  # fetch never writes local branches
    assert leg2.adopt_remote_run("origin", "r1") == sha
    restored = tmp_path / "clone" / ".omg" / "runs" / "r1"
    assert leg2.restore_run_dir("r1", restored) == sha
    for rel in ("state.json", "events.jsonl", "artifacts/n4.out"):
        assert (restored / rel).read_bytes() == (run_dir / rel).read_bytes()
    assert not (restored / "leg.lock").exists()
    assert git(tmp_path / "clone", "status", "--porcelain") == ""

    make_run_dir(restored, seq=2)  # leg 2 continues and pushes
    second = leg2.commit_run_dir("r1", restored, "leg 2", expect_parent=sha)
    leg2.push("origin", [RUN_REF])
    assert tree_files(other, second)["state.json"] == b'{"seq": 2}\n'
    run_repo.fetch("origin", [f"+{RUN_REF}:refs/remotes/origin/omg/runs/r1"])
    assert run_repo.adopt_remote_run("origin", "r1") == second
    assert run_repo.run_head("r1") == second


def test_plain_path_and_file_url_remotes(
    run_repo: RunRepo, user: UserCheckout, bare: Path, tmp_path: Path
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    sha = run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    run_repo.push(str(bare), [RUN_REF])
    assert git(bare, "rev-parse", RUN_REF).strip() == sha
    assert run_repo.remote_run_head(str(bare), "r1") == sha  # tracked under omg-<hash>
    fresh = pygit2.init_repository(str(tmp_path / "fresh"), initial_head="main")
    leg = runner(Path(fresh.workdir or ""))
    leg.fetch(f"file://{bare}", [RUN_REF])
    assert leg.remote_run_head(f"file://{bare}", "r1") == sha
    assert leg.remote_run_head(str(bare), "r1") is None  # another spelling, another namespace


def test_fetching_a_run_the_remote_does_not_have(run_repo: RunRepo, origin: str) -> None:
    run_repo.fetch("origin", [RUN_REF, "refs/heads/omg/work/r1/*"])
    assert run_repo.remote_run_head("origin", "r1") is None


def test_two_legs_racing_the_same_run(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path, bare: Path
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    start = run_repo.commit_run_dir("r1", run_dir, "leg 1", expect_parent=None)
    run_repo.push("origin", [RUN_REF])

    legs = []
    for name in ("a", "b"):  # two CI jobs resume the same run from the same head
        clone(origin, tmp_path / name)
        leg = runner(tmp_path / name)
        leg.fetch("origin", [RUN_REF])
        assert leg.adopt_remote_run("origin", "r1") == start
        rd = tmp_path / name / ".omg" / "runs" / "r1"
        leg.restore_run_dir("r1", rd)
        (rd / "artifacts" / f"by-{name}.out").write_text(name)
        legs.append((leg, rd))

    (leg_a, dir_a), (leg_b, dir_b) = legs
    won = leg_a.commit_run_dir("r1", dir_a, "leg a", expect_parent=start)
    leg_a.push("origin", [RUN_REF])
    lost = leg_b.commit_run_dir("r1", dir_b, "leg b", expect_parent=start)
    with pytest.raises(GitError) as err:
        leg_b.push("origin", [f"{RUN_REF}:{RUN_REF}"])
    text = str(err.value)
    assert "another leg advanced the run" in text
    assert "omg never force-pushes" in text
    assert "omg resume --fetch origin r1" in text

    assert git(bare, "rev-parse", RUN_REF).strip() == won  # nothing lost on the remote
    history = git(bare, "rev-list", "--parents", RUN_REF).split("\n")
    assert history[:2] == [f"{won} {start}", start]  # linear: b's commit never landed
    assert lost not in git(bare, "rev-list", "--all")

    leg_b.fetch("origin", [RUN_REF])  # the loser cannot adopt: histories diverged
    with pytest.raises(GitError, match=r"diverged.*never rewrites"):
        leg_b.adopt_remote_run("origin", "r1")


def test_a_push_whose_remote_tip_is_unknown_locally(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    """The loser never fetched the winner's commit: still a clean 'advanced' refusal."""
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    run_repo.commit_run_dir("r1", run_dir, "local", expect_parent=None)
    clone(origin, tmp_path / "other")
    other = runner(tmp_path / "other")
    rd = make_run_dir(tmp_path / "other" / ".omg" / "runs" / "r1", seq=5)
    other.commit_run_dir("r1", rd, "elsewhere", expect_parent=None)
    other.push("origin", [RUN_REF])
    with pytest.raises(GitError, match=r"another leg advanced the run"):
        run_repo.push("origin", [RUN_REF])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (f"+{RUN_REF}:{RUN_REF}", "never force-pushes"),
        (f":{RUN_REF}", "never deletes remote branches"),
    ],
)
def test_force_and_delete_refspecs_are_refused(
    run_repo: RunRepo, origin: str, spec: str, message: str
) -> None:
    with pytest.raises(GitError, match=message):
        run_repo.push("origin", [spec])


def test_fetch_never_writes_local_branches(run_repo: RunRepo, origin: str) -> None:
    with pytest.raises(GitError, match=r"never overwrites a local branch"):
        run_repo.fetch("origin", [f"+{RUN_REF}:{RUN_REF}"])


def test_unknown_remote_and_unreachable_remote(run_repo: RunRepo, tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"no remote named 'upstream'.*git remote add"):
        run_repo.push("upstream", [RUN_REF])
    run_dir = make_run_dir(tmp_path / "rd")
    run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    with pytest.raises(GitError, match=r"pushing .* failed"):
        run_repo.push(str(tmp_path / "missing.git"), [RUN_REF])
    with pytest.raises(GitError, match=r"fetching .* failed"):
        run_repo.fetch(str(tmp_path / "missing.git"), [RUN_REF])


def test_credentials_in_a_remote_url_never_reach_a_message(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    user.repo.remotes.create("leaky", "https://user:s3cret@127.0.0.1:1/repo.git")
    run_repo.commit_run_dir("r1", make_run_dir(tmp_path / "rd"), "m", expect_parent=None)
    with pytest.raises(GitError) as err:
        run_repo.push("leaky", [RUN_REF])
    assert "s3cret" not in str(err.value)


def test_remote_operations_leave_the_user_checkout_alone(
    run_repo: RunRepo, user: UserCheckout, origin: str, tmp_path: Path
) -> None:
    before = user.snapshot()
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    run_repo.push("origin", [RUN_REF])
    run_repo.fetch("origin", [RUN_REF, "main"])
    run_repo.adopt_remote_run("origin", "r1")
    assert user.snapshot() == before
