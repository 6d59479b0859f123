"""A lane's checkout a kill left half made is adopted or made again; a resume then finishes the run.

Each test stops a leg after the lane's first node settled, then builds by hand one state a SIGKILL
can leave while libgit2 makes the lane's checkout again (a fresh clone, a removed directory): the
admin entry `.git/worktrees/<id>` made, the lane directory made, its `.git` file written (or
begun), the admin's `commondir` and `gitdir`, `HEAD`, the files checked out part way (the index,
written last, missing) — or a clearing of such a state killed part way. The resume must finish
the run without running the settled node again, on a lane holding that node's commit.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from kit import omg_call

from omg.git import RunRepo, open_repo
from omg.git.names import worktree_id

# Each node notes its run in ran.txt (four levels up from the lane is the repository's root).
GRAPH = """\
name: lane-crash
nodes:
  - id: write
    worktree: lane
    run: echo write >> ../../../../ran.txt && echo first > work.txt
  - id: check
    depends_on: [write]
    worktree: lane
    run: |
      echo check >> ../../../../ran.txt
      grep -qx first work.txt && grep -qx seed seed.txt && test -f deep/er/nested.txt
"""

SIG = pygit2.Signature("Test User", "test@example.com")
FILES = {"seed.txt": "seed\n", "g.yaml": GRAPH, "deep/er/nested.txt": "n\n"}


def _repo(root: Path) -> pygit2.Repository:
    repo = pygit2.init_repository(str(root), initial_head="main")
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        repo.index.add(name)
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "initial", repo.index.write_tree(), [])
    (root / ".gitignore").write_text("ran.txt\n")
    return repo


class Lane:
    """The lane's checkout and its admin entry, after the first leg settled ``write``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / ".omg" / "worktrees" / "r" / "lane"
        self.admin = root / ".git" / "worktrees" / worktree_id("r", "lane")
        self.parts = {p.name: p.read_bytes() for p in self.admin.iterdir() if p.is_file()}
        self.dotgit = (self.path / ".git").read_bytes()

    def admin_with(self, *parts: str) -> None:
        """The admin entry holding only ``parts`` (as libgit2 wrote them)."""
        shutil.rmtree(self.admin)
        self.admin.mkdir()
        for part in parts:
            (self.admin / part).write_bytes(self.parts[part])

    def directory_with(self, dotgit: bytes | None, *files: str) -> None:
        """The lane directory holding ``dotgit`` as its `.git` file and ``files`` checked out."""
        shutil.rmtree(self.path)
        self.path.mkdir()
        if dotgit is not None:
            (self.path / ".git").write_bytes(dotgit)
        for name in files:
            (self.path / name).parent.mkdir(parents=True, exist_ok=True)
            (self.path / name).write_text(FILES[name])


def _admin_only(lane: Lane) -> None:
    shutil.rmtree(lane.path)
    lane.admin_with()  # killed just after the admin directory was made


def _empty_directory(lane: Lane) -> None:
    lane.admin_with()
    lane.directory_with(None)


def _dotgit_begun(lane: Lane) -> None:
    lane.admin_with()
    lane.directory_with(b"")  # opened, truncated, killed before the write


def _dotgit_half_written(lane: Lane) -> None:
    lane.admin_with()
    lane.directory_with(lane.dotgit[: len(lane.dotgit) // 2])


def _no_head(lane: Lane) -> None:
    lane.admin_with("commondir", "gitdir")
    lane.directory_with(lane.dotgit)


def _nothing_checked_out(lane: Lane) -> None:
    lane.admin_with("commondir", "gitdir", "HEAD")
    lane.directory_with(lane.dotgit)


def _checkout_part_way(lane: Lane) -> None:
    lane.admin_with("commondir", "gitdir", "HEAD")
    lane.directory_with(lane.dotgit, "seed.txt")  # work.txt and deep/ not yet written …
    (lane.path / "deep" / "er").mkdir(parents=True)
    (lane.path / "deep" / "er" / "nested.txt").write_text("")  # … or begun
    (lane.admin / "index.lock").write_bytes(b"DIRC")  # the index being written when killed


def _clearing_killed(lane: Lane) -> None:
    """A resume clearing a half-made checkout was killed: part aside, part of the admin left."""
    _checkout_part_way(lane)
    lane.path.rename(lane.path.with_name(".lane.unfinished"))
    (lane.path.with_name(".lane.unfinished") / ".git").unlink()
    (lane.admin / "gitdir").unlink()


STATES: dict[str, Callable[[Lane], None]] = {
    "admin-entry-only": _admin_only,
    "empty-lane-directory": _empty_directory,
    "dotgit-file-begun": _dotgit_begun,
    "dotgit-file-half-written": _dotgit_half_written,
    "admin-without-head": _no_head,
    "head-set-nothing-checked-out": _nothing_checked_out,
    "checkout-part-way": _checkout_part_way,
    "clearing-killed-part-way": _clearing_killed,
}


def _ran(root: Path) -> list[str]:
    return (root / "ran.txt").read_text().split()


def _events(root: Path) -> list[dict[str, object]]:
    text = (root / ".omg" / "runs" / "r" / "events.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("state", list(STATES))
def test_a_resume_finishes_the_run_over_a_lane_checkout_a_kill_left_half_made(
    tmp_path: Path, state: str
) -> None:
    root = tmp_path / "w"
    _repo(root)
    first = omg_call("run", "g.yaml", "--run-id", "r", "--max-nodes", "1", cwd=root)
    assert first.returncode == 4, first.stderr  # paused for the leg budget: write settled
    repo = pygit2.Repository(str(root))
    settled = str(repo.references["refs/heads/omg/work/r/lane"].target)
    assert settled != str(repo.head.target)  # write's commit on the lane

    lane = Lane(root)
    STATES[state](lane)

    res = omg_call("resume", "r", cwd=root)
    assert res.returncode == 0, res.stderr
    assert _ran(root) == ["write", "check"]  # write settled once and never ran again
    finished = [e for e in _events(root) if e["event"] in ("node_passed", "node_failed")]
    assert [(e["node_id"], e["event"]) for e in finished] == [
        ("write", "node_passed"),
        ("check", "node_passed"),
    ]
    assert finished[0]["worktree_commit"] == settled
    repo = pygit2.Repository(str(root))
    tip = repo.references["refs/heads/omg/work/r/lane"].peel(pygit2.Commit)
    assert str(tip.id) == finished[1]["worktree_commit"]
    assert tip.id == pygit2.Oid(hex=settled) or repo.descendant_of(tip.id, settled)
    assert tip.tree["work.txt"].data == b"first\n"  # type: ignore[attr-defined]
    assert tip.tree["seed.txt"].data == b"seed\n"  # type: ignore[attr-defined]
    assert (lane.path / "deep" / "er" / "nested.txt").read_text() == "n\n"
    assert not lane.path.with_name(".lane.unfinished").exists()
    assert pygit2.Repository(str(lane.path)).head.shorthand == "omg/work/r/lane"


def test_a_finished_checkout_is_adopted_with_what_a_killed_node_left_in_it(
    tmp_path: Path,
) -> None:
    """Complete (its index written): reused as it is — a node's uncommitted file survives."""
    root = tmp_path / "w"
    _repo(root)
    run = open_repo(root, env={})
    assert isinstance(run, RunRepo)
    wt = run.acquire_worktree("r", "lane")
    (wt.path / "wip.txt").write_text("a killed node's file\n")
    again = open_repo(root, env={})
    assert again is not None
    assert again.acquire_worktree("r", "lane") == wt
    assert (wt.path / "wip.txt").read_text() == "a killed node's file\n"


@pytest.mark.parametrize(
    ("where", "text"),
    [("precious.txt", "mine\n"), ("seed.txt", "changed\n"), ("deep/er/nested.txt", "n\nmore\n")],
)
def test_a_half_made_checkout_holding_what_its_branch_does_not_is_refused_and_kept(
    tmp_path: Path, where: str, text: str
) -> None:
    """Its `.git` names the lane's admin entry, but a file is no (start of a) file of the
    branch: nothing is removed, and the refusal names the file."""
    root = tmp_path / "w"
    _repo(root)
    first = omg_call("run", "g.yaml", "--run-id", "r", "--max-nodes", "1", cwd=root)
    assert first.returncode == 4, first.stderr
    lane = Lane(root)
    _nothing_checked_out(lane)
    (lane.path / where).parent.mkdir(parents=True, exist_ok=True)
    (lane.path / where).write_text(text)

    res = omg_call("resume", "r", cwd=root)
    assert res.returncode == 3, res.stderr
    assert "never finished" in res.stderr and where.split("/")[0] in res.stderr
    assert (lane.path / where).read_text() == text
    assert (lane.path / ".git").read_bytes() == lane.dotgit
    assert _ran(root) == ["write"]


def test_a_directory_naming_another_admin_entry_is_still_refused(tmp_path: Path) -> None:
    root = tmp_path / "w"
    _repo(root)
    run = open_repo(root, env={})
    assert run is not None
    lane = root / ".omg" / "worktrees" / "r" / "lane"
    lane.mkdir(parents=True)
    (lane / ".git").write_text("gitdir: /nowhere/else\n")
    (lane / "precious.txt").write_text("mine\n")
    from omg.errors import GitError

    with pytest.raises(GitError, match="is not a worktree of"):
        run.acquire_worktree("r", "lane")
    assert (lane / "precious.txt").read_text() == "mine\n"


def test_clean_sweeps_a_checkout_set_aside_while_being_cleared(tmp_path: Path) -> None:
    root = tmp_path / "w"
    _repo(root)
    run = open_repo(root, env={})
    assert run is not None
    wt = run.acquire_worktree("r", "lane")
    aside = wt.path.with_name(".lane.unfinished")
    aside.mkdir()
    (aside / "seed.txt").write_text("half\n")
    notes = run.clean("r")
    assert not aside.exists() and not wt.path.exists()
    assert any("deleted" in note for note in notes)
    assert not (root / ".omg" / "worktrees" / "r").exists()


def test_a_half_made_checkout_of_a_lane_holding_unrecorded_commits_is_not_taken_for_work(
    tmp_path: Path,
) -> None:
    """A killed node committed on the lane, then a kill struck while its checkout was made
    again: the unrecorded commit is kept aside as it was — no commit of the half checkout's
    missing files on top — and the lane goes back to what the run recorded."""
    root = tmp_path / "w"
    _repo(root)
    first = omg_call("run", "g.yaml", "--run-id", "r", "--max-nodes", "1", cwd=root)
    assert first.returncode == 4, first.stderr
    repo = pygit2.Repository(str(root))
    settled = repo.references["refs/heads/omg/work/r/lane"].peel(pygit2.Commit)
    lane = Lane(root)
    checkout = pygit2.Repository(str(lane.path))
    (lane.path / "work.txt").write_text("a killed attempt\n")
    checkout.index.add("work.txt")
    checkout.index.write()
    unrecorded = checkout.create_commit(
        "HEAD", SIG, SIG, "attempt", checkout.index.write_tree(), [settled.id]
    )
    _checkout_part_way(lane)

    res = omg_call("resume", "r", cwd=root)
    assert res.returncode == 0, res.stderr
    assert _ran(root) == ["write", "check"]
    repo = pygit2.Repository(str(root))
    kept = [r for r in repo.references if r.startswith("refs/heads/kept/omg-work-r-lane-")]
    assert [repo.references[r].target for r in kept] == [unrecorded]
    tip = repo.references["refs/heads/omg/work/r/lane"].peel(pygit2.Commit)
    assert tip.id == settled.id or repo.descendant_of(tip.id, settled.id)
    assert not repo.descendant_of(tip.id, unrecorded)
