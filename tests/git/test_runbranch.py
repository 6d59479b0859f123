"""The run branch: committing a run directory, compare-and-swap, identity, restoring."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest
from gitkit import SIG, UserCheckout, make_repo, make_run_dir, tree_files

from omg.errors import GitError
from omg.git import RunRepo, open_repo


def test_open_repo_outside_git_is_none(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert open_repo(tmp_path / "plain") is None


def test_open_repo_finds_the_root_from_a_subdirectory(user: UserCheckout) -> None:
    found = open_repo(user.path / "src", env={})
    assert found is not None and found.root == user.path.resolve()


def test_run_branch_names(run_repo: RunRepo) -> None:
    assert run_repo.run_branch("r1") == "omg/runs/r1"
    assert run_repo.run_head("r1") is None
    with pytest.raises(GitError, match=r"cannot be part of a git branch name"):
        run_repo.run_branch("bad..id")


def test_commit_run_dir_puts_the_run_dir_at_the_branch_root(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    (run_dir / "artifacts" / "deep").mkdir()
    (run_dir / "artifacts" / "deep" / "x.out").write_text("x\n")
    (run_dir / "artifacts" / "empty").mkdir()
    sha = run_repo.commit_run_dir("r1", run_dir, "leg 1: started", expect_parent=None)
    assert run_repo.run_head("r1") == sha
    files = tree_files(user.repo, sha)
    assert sorted(files) == [
        "artifacts/deep/x.out", "artifacts/n0.out", "artifacts/n1.out",
        "events.jsonl", "state.json",
    ]  # fmt: skip
    assert files["state.json"] == b'{"seq": 1}\n'
    commit = user.repo[sha].peel(pygit2.Commit)
    assert commit.parents == [] and commit.message == "leg 1: started"


def test_commit_run_dir_chains_commits_and_skips_unchanged_trees(
    run_repo: RunRepo, user: UserCheckout
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    first = run_repo.commit_run_dir("r1", run_dir, "one", expect_parent=None)
    assert run_repo.commit_run_dir("r1", run_dir, "same", expect_parent=first) == first
    (run_dir / "leg.lock").write_text("another pid")  # the lock never counts as a change
    assert run_repo.commit_run_dir("r1", run_dir, "same", expect_parent=first) == first
    (run_dir / "verified.json").write_text("{}")  # nor does this machine's verified point
    assert run_repo.commit_run_dir("r1", run_dir, "same", expect_parent=first) == first
    make_run_dir(run_dir, seq=2)
    second = run_repo.commit_run_dir("r1", run_dir, "two", expect_parent=first)
    assert second != first
    assert [str(p) for p in user.repo[second].peel(pygit2.Commit).parent_ids] == [first]


def test_commit_run_dir_keeps_the_executable_bit(run_repo: RunRepo, user: UserCheckout) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    (run_dir / "hook.sh").write_text("#!/bin/sh\n")
    (run_dir / "hook.sh").chmod(0o755)
    sha = run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    entry = user.repo[sha].peel(pygit2.Commit).tree["hook.sh"]
    assert entry.filemode == pygit2.enums.FileMode.BLOB_EXECUTABLE


def test_compare_and_swap_refuses_a_moved_branch(run_repo: RunRepo, user: UserCheckout) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    first = run_repo.commit_run_dir("r1", run_dir, "one", expect_parent=None)
    make_run_dir(run_dir, seq=2)
    second = run_repo.commit_run_dir("r1", run_dir, "two", expect_parent=first)
    make_run_dir(run_dir, seq=3)
    with pytest.raises(GitError) as err:
        run_repo.commit_run_dir("r1", run_dir, "three", expect_parent=first)
    text = str(err.value)
    assert f"run r1 moved on: refs/heads/omg/runs/r1 is at {second[:12]}" in text
    assert f"this leg started from {first[:12]}" in text
    assert "another leg advanced it — fetch and resume again" in text
    assert run_repo.run_head("r1") == second


def test_compare_and_swap_catches_a_writer_between_read_and_commit(
    run_repo: RunRepo, user: UserCheckout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libgit2's own check: the tip moved after omg read it but before the ref update."""
    from omg.git import runbranch

    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    first = run_repo.commit_run_dir("r1", run_dir, "one", expect_parent=None)
    other = pygit2.Repository(str(user.path))
    real_tree = runbranch._tree

    def racing_tree(
        repo: pygit2.Repository, directory: Path, *, top: bool, seen: runbranch.TreeCache
    ) -> pygit2.Oid | None:
        tree = real_tree(repo, directory, top=top, seen=seen)
        if top:  # another process advances the branch while this leg builds its tree
            parent = other[first].peel(pygit2.Commit)
            other.create_commit(
                "refs/heads/omg/runs/r1", SIG, SIG, "rival", parent.tree_id, [first]
            )
        return tree

    monkeypatch.setattr(runbranch, "_tree", racing_tree)
    make_run_dir(run_dir, seq=2)
    with pytest.raises(GitError, match=r"run r1 moved on"):
        run_repo.commit_run_dir("r1", run_dir, "two", expect_parent=first)
    rival = user.repo[run_repo.run_head("r1") or ""].peel(pygit2.Commit)
    assert rival.message == "rival"


def test_expect_parent_with_a_deleted_branch(run_repo: RunRepo, user: UserCheckout) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    first = run_repo.commit_run_dir("r1", run_dir, "one", expect_parent=None)
    user.repo.references.delete("refs/heads/omg/runs/r1")
    with pytest.raises(GitError, match=r"is at nowhere"):
        run_repo.commit_run_dir("r1", run_dir, "two", expect_parent=first)


def test_missing_run_dir_is_a_git_error(run_repo: RunRepo, tmp_path: Path) -> None:
    with pytest.raises(GitError, match=r"does not exist"):
        run_repo.commit_run_dir("r1", tmp_path / "nope", "m", expect_parent=None)


@pytest.mark.parametrize(
    ("env", "config", "author", "committer"),
    [
        (
            {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "C",
             "GIT_COMMITTER_EMAIL": "c@x"},
            {"user.name": "Cfg", "user.email": "cfg@x"},
            ("A", "a@x"), ("C", "c@x"),
        ),
        ({}, {"user.name": "Cfg", "user.email": "cfg@x"}, ("Cfg", "cfg@x"), ("Cfg", "cfg@x")),
        ({"GIT_AUTHOR_EMAIL": "a@x"}, {}, ("omg", "a@x"),
         ("omg", "omg@users.noreply.github.com")),
        ({}, {}, ("omg", "omg@users.noreply.github.com"),
         ("omg", "omg@users.noreply.github.com")),
    ],
    ids=["environment", "repo-config", "per-field", "bot"],
)  # fmt: skip
def test_commit_identity(
    tmp_path: Path,
    env: dict[str, str],
    config: dict[str, str],
    author: tuple[str, str],
    committer: tuple[str, str],
) -> None:
    repo = make_repo(tmp_path / "r")
    for key, value in config.items():
        repo.config[key] = value
    run_repo = open_repo(tmp_path / "r", env=env)
    assert run_repo is not None
    sha = run_repo.commit_run_dir("r1", make_run_dir(tmp_path / "rd"), "m", expect_parent=None)
    commit = repo[sha].peel(pygit2.Commit)
    assert (commit.author.name, commit.author.email) == author
    assert (commit.committer.name, commit.committer.email) == committer


def test_restore_run_dir_round_trip(run_repo: RunRepo, user: UserCheckout, tmp_path: Path) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1", n_artifacts=3)
    (run_dir / "tool.sh").write_text("#!/bin/sh\n")
    (run_dir / "tool.sh").chmod(0o755)
    sha = run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    into = tmp_path / "restored"
    assert run_repo.restore_run_dir("r1", into) == sha
    got = sorted(str(p.relative_to(into)) for p in into.rglob("*") if p.is_file())
    assert got == sorted(
        ["artifacts/n0.out", "artifacts/n1.out", "artifacts/n2.out", "events.jsonl",
         "state.json", "tool.sh"]
    )  # fmt: skip
    assert (into / "state.json").read_bytes() == (run_dir / "state.json").read_bytes()
    assert os.access(into / "tool.sh", os.X_OK)
    assert not list(into.rglob("*.tmp*"))


def test_restore_leaves_unchanged_files_and_prunes_on_request(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    into = tmp_path / "restored"
    run_repo.restore_run_dir("r1", into)
    inode = (into / "state.json").stat().st_ino
    (into / "artifacts" / "stale.out").write_text("from a leg that never committed\n")
    (into / "leg.lock").write_text("held")
    run_repo.restore_run_dir("r1", into)
    assert (into / "state.json").stat().st_ino == inode  # identical content is not rewritten
    assert (into / "artifacts" / "stale.out").exists()  # not pruned unless asked
    run_repo.restore_run_dir("r1", into, prune=True)
    assert not (into / "artifacts" / "stale.out").exists()
    assert (into / "leg.lock").read_text() == "held"  # the lock is never touched


def test_restore_from_an_explicit_ref_and_missing_refs(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    first = run_repo.commit_run_dir("r1", run_dir, "one", expect_parent=None)
    make_run_dir(run_dir, seq=2)
    run_repo.commit_run_dir("r1", run_dir, "two", expect_parent=first)
    into = tmp_path / "restored"
    assert run_repo.restore_run_dir("r1", into, ref=first) == first
    assert (into / "state.json").read_text() == '{"seq": 1}\n'
    assert run_repo.restore_run_dir("r2", into) is None
    assert run_repo.restore_run_dir("r1", into, ref="refs/heads/nope") is None


def test_restore_refuses_symlinks_in_a_crafted_branch(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    repo = user.repo
    builder = repo.TreeBuilder()
    builder.insert("state.json", repo.create_blob(b"/etc/passwd"), pygit2.enums.FileMode.LINK)
    tree = builder.write()
    repo.create_commit("refs/heads/omg/runs/evil", SIG, SIG, "evil", tree, [])
    with pytest.raises(GitError, match=r"holds only files and directories"):
        run_repo.restore_run_dir("evil", tmp_path / "restored")
    assert not (tmp_path / "restored" / "state.json").exists()


def test_read_run_file(run_repo: RunRepo, user: UserCheckout) -> None:
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    assert run_repo.read_run_file("r1", "state.json") == '{"seq": 1}\n'
    with pytest.raises(GitError, match=r"has no missing.json"):
        run_repo.read_run_file("r1", "missing.json")
    with pytest.raises(GitError, match=r"does not exist"):
        run_repo.read_run_file("r2", "state.json")


def test_run_branch_operations_leave_the_user_checkout_alone(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    before = user.snapshot()
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    first = run_repo.commit_run_dir("r1", run_dir, "one", expect_parent=None)
    make_run_dir(run_dir, seq=2)
    run_repo.commit_run_dir("r1", run_dir, "two", expect_parent=first)
    run_repo.restore_run_dir("r1", tmp_path / "elsewhere")
    run_repo.restore_run_dir("r1", run_dir, ref=first)
    assert user.snapshot() == before


def test_run_dir_bytes_are_stored_raw_despite_gitattributes(
    run_repo: RunRepo, user: UserCheckout, tmp_path: Path
) -> None:
    """A repository's eol/text attributes must not rewrite state.json on its way into git."""
    (user.path / ".gitattributes").write_text("* text eol=crlf\n")
    run_dir = make_run_dir(user.path / ".omg" / "runs" / "r1")
    raw = b'{\r\n  "reply": "a CRLF reply from a tool"\r\n}\n'
    (run_dir / "state.json").write_bytes(raw)
    sha = run_repo.commit_run_dir("r1", run_dir, "m", expect_parent=None)
    assert tree_files(user.repo, sha)["state.json"] == raw
    run_repo.restore_run_dir("r1", tmp_path / "back")
    assert (tmp_path / "back" / "state.json").read_bytes() == raw
    (user.path / ".gitattributes").unlink()


def test_open_repo_in_a_bare_repository_is_none(bare: Path) -> None:
    """A bare repository has no working tree to run nodes in."""
    assert open_repo(bare) is None


def test_one_run_repo_shared_by_threads(run_repo: RunRepo, user: UserCheckout) -> None:
    """The engine settles nodes on worker threads; every commit must land, in order per run."""
    import threading

    def leg(run_id: str) -> None:
        run_dir = make_run_dir(user.path / ".omg" / "runs" / run_id)
        head = None
        for seq in range(1, 8):
            make_run_dir(run_dir, seq=seq)
            head = run_repo.commit_run_dir(run_id, run_dir, f"{seq}", expect_parent=head)

    threads = [threading.Thread(target=leg, args=(f"t{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for i in range(3):
        walker = user.repo.walk(run_repo.run_head(f"t{i}"))
        assert [c.message for c in walker] == [str(s) for s in range(7, 0, -1)]
