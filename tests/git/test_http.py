"""Smart HTTP on loopback: the token goes to git in memory only, and only where it belongs."""

from __future__ import annotations

import base64
from pathlib import Path

import pygit2
import pytest
from githttp import GitHttpServer
from gitkit import (
    TOKEN,
    UserCheckout,
    all_bytes_under,
    commit_files,
    git,
    make_run_dir,
)

from omg.errors import GitError
from omg.git import RunRepo, open_repo
from omg.github import git_tokens

RUN_REF = "refs/heads/omg/runs/r1"


def _leg(path: Path, http_remote: GitHttpServer, **env: str) -> RunRepo:
    """A leg whose GitHub server (GITHUB_SERVER_URL) is the loopback server."""
    server = http_remote.url.rsplit("/", 1)[0]
    found = open_repo(path, env={}, tokens=git_tokens({"GITHUB_SERVER_URL": server, **env}))
    assert found is not None
    return found


@pytest.fixture
def committed(user: UserCheckout, http_remote: GitHttpServer) -> str:
    user.repo.remotes.create("origin", http_remote.url)
    leg = open_repo(user.path, env={})
    assert leg is not None
    return leg.commit_run_dir(
        "r1", make_run_dir(user.path / ".omg/runs/r1"), "m", expect_parent=None
    )


def test_push_and_fetch_with_github_token(
    user: UserCheckout, http_remote: GitHttpServer, committed: str, tmp_path: Path
) -> None:
    before = user.snapshot()
    leg = _leg(user.path, http_remote, GITHUB_TOKEN=TOKEN)
    leg.push("origin", [RUN_REF])
    assert git(http_remote.bare, "rev-parse", RUN_REF).strip() == committed
    basic = "Basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert basic in http_remote.auth_seen

    fresh = pygit2.init_repository(str(tmp_path / "fresh"), initial_head="main")
    fresh.remotes.create("origin", http_remote.url)
    other = _leg(tmp_path / "fresh", http_remote, GITHUB_TOKEN=TOKEN)
    other.fetch("origin", [RUN_REF])
    assert other.remote_run_head("origin", "r1") == committed
    other.adopt_remote_run("origin", "r1")
    assert other.restore_run_dir("r1", tmp_path / "fresh/.omg/runs/r1") == committed

    for repo_dir in (user.path, tmp_path / "fresh"):
        assert TOKEN not in (repo_dir / ".git" / "config").read_text()
        assert all_bytes_under(repo_dir / ".git")(TOKEN.encode()) == []
    assert user.snapshot() == before


def test_omg_git_token_works_for_any_host(
    user: UserCheckout, http_remote: GitHttpServer, committed: str
) -> None:
    leg = open_repo(user.path, env={}, tokens=git_tokens({"OMG_GIT_TOKEN": TOKEN}))
    assert leg is not None
    leg.push(http_remote.url, [RUN_REF])  # a URL remote, not a configured name
    assert leg.remote_run_head(http_remote.url, "r1") == committed
    assert all_bytes_under(user.path / ".git")(TOKEN.encode()) == []


def test_without_a_token_push_and_fetch_fail_clearly(
    user: UserCheckout, http_remote: GitHttpServer, committed: str
) -> None:
    leg = _leg(user.path, http_remote)
    for attempt in (lambda: leg.push("origin", [RUN_REF]), lambda: leg.fetch("origin", [RUN_REF])):
        with pytest.raises(GitError) as err:
            attempt()
        text = str(err.value)
        assert "remote 'origin'" in text and "asks for a login and no token is available" in text
        assert "GITHUB_TOKEN" in text and "OMG_GIT_TOKEN" in text
    assert git(http_remote.bare, "for-each-ref") == ""


def test_a_wrong_token_is_refused_once_not_retried_forever(
    user: UserCheckout, http_remote: GitHttpServer, committed: str
) -> None:
    leg = _leg(user.path, http_remote, GITHUB_TOKEN="ghs_wrong")
    with pytest.raises(GitError, match=r"refused the token in GITHUB_TOKEN"):
        leg.push("origin", [RUN_REF])
    assert len(http_remote.auth_seen) < 5


def test_github_token_is_never_offered_to_another_host(
    user: UserCheckout, http_remote: GitHttpServer, committed: str
) -> None:
    leg = open_repo(user.path, env={}, tokens=git_tokens({"GITHUB_TOKEN": TOKEN}))  # github.com
    assert leg is not None
    with pytest.raises(GitError, match=r"no token is available"):
        leg.push("origin", [RUN_REF])
    basic = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert not any(basic in seen for seen in http_remote.auth_seen)


def test_a_server_side_rejection_is_a_git_error(
    user: UserCheckout, http_remote: GitHttpServer, committed: str
) -> None:
    hook = http_remote.bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'protected by policy' >&2\nexit 1\n")
    hook.chmod(0o755)
    leg = _leg(user.path, http_remote, GITHUB_TOKEN=TOKEN)
    with pytest.raises(
        GitError, match=r"refused refs/heads/omg/runs/r1: pre-receive hook declined"
    ):
        leg.push("origin", [RUN_REF])
    assert leg.remote_run_head("origin", "r1") is None  # no tracking ref for a refused push


def test_a_shallow_ci_checkout_resumes_a_run_and_pushes_its_lanes(
    user: UserCheckout, http_remote: GitHttpServer, tmp_path: Path
) -> None:
    """actions/checkout clones with depth 1: fetching, restoring and pushing must still work."""
    user.repo.remotes.create("origin", http_remote.url)
    commit_files(user.repo, {"b.txt": "b\n"}, "second")
    env = {"OMG_GIT_TOKEN": TOKEN}
    leg = open_repo(user.path, env={}, tokens=git_tokens(env))
    assert leg is not None
    leg.push("origin", ["main"])
    first = leg.commit_run_dir(
        "r1", make_run_dir(user.path / ".omg/runs/r1"), "leg 1", expect_parent=None
    )
    lane = leg.acquire_worktree("r1", "a")
    (lane.path / "x.txt").write_text("x\n")
    recorded = leg.commit_worktree(lane, "impl")
    assert recorded
    leg.push("origin", ["omg/runs/r1", lane.branch])

    auth = pygit2.RemoteCallbacks(credentials=pygit2.UserPass("x-access-token", TOKEN))
    shallow = pygit2.clone_repository(
        http_remote.url, str(tmp_path / "ci"), depth=1, callbacks=auth
    )
    assert shallow.is_shallow
    ci = open_repo(tmp_path / "ci", env={}, tokens=git_tokens(env))
    assert ci is not None
    ci.fetch(
        "origin", ["omg/runs/r1", "+refs/heads/omg/work/r1/*:refs/remotes/origin/omg/work/r1/*"]
    )
    assert ci.adopt_remote_run("origin", "r1") == first
    run_dir = tmp_path / "ci" / ".omg" / "runs" / "r1"
    ci.restore_run_dir("r1", run_dir)
    back = ci.restore_worktree("r1", "a", recorded)
    (back.path / "y.txt").write_text("y\n")
    ci.commit_worktree(back, "review fixes")
    fresh = ci.acquire_worktree("r1", "b")  # a new lane based on the shallow HEAD
    (fresh.path / "z.txt").write_text("z\n")
    ci.commit_worktree(fresh, "docs")
    make_run_dir(run_dir, seq=2)
    second = ci.commit_run_dir("r1", run_dir, "leg 2", expect_parent=first)
    ci.push("origin", ["omg/runs/r1", back.branch, fresh.branch])
    assert git(http_remote.bare, "rev-parse", "omg/runs/r1").strip() == second
    git(http_remote.bare, "fsck", "--strict")  # every pushed object arrived whole
