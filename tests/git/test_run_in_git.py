"""A run lives in git: committed per settled node, pushed, fetched and resumed in a fresh clone."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from kit import omg_call

GRAPH = """\
name: lane
nodes:
  - id: write
    run: echo "first" > work.txt && echo wrote
    worktree: lane
  - id: check
    depends_on: [write]
    run: grep -q first work.txt && echo checked
    worktree: lane
  - id: approve
    type: gate
    depends_on: [check]
    description: Ship the lane?
  - id: finish
    depends_on: [approve]
    run: echo "second" >> work.txt && cat work.txt
    worktree: lane
"""

SIG = pygit2.Signature("Test User", "test@example.com")


@pytest.fixture
def omg(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The CLI's entry point in this process (``kit.omg_call``): the same exit codes, output and
    commits as `python -m omg`, without an interpreter start-up per call."""

    def run(
        *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return omg_call(*args, cwd=cwd or tmp_path, env=env)

    return run


def make_repo(path: Path) -> pygit2.Repository:
    repo = pygit2.init_repository(str(path), initial_head="main")
    (path / "tracked.txt").write_text("original\n")
    (path / "graph.yaml").write_text(GRAPH)
    repo.index.add("tracked.txt")
    repo.index.add("graph.yaml")
    repo.index.write()
    tree = repo.index.write_tree()
    repo.create_commit("HEAD", SIG, SIG, "initial", tree, [])
    return repo


@pytest.fixture
def origin(tmp_path: Path) -> tuple[pygit2.Repository, Path]:
    """A working repo with a bare file:// remote named origin that has main."""
    work = tmp_path / "work"
    repo = make_repo(work)
    bare = tmp_path / "origin.git"
    pygit2.init_repository(str(bare), bare=True)
    remote = repo.remotes.create("origin", bare.as_uri())
    remote.push(["refs/heads/main:refs/heads/main"])
    return repo, bare


def branch_files(repo: pygit2.Repository, ref: str) -> dict[str, str]:
    commit = repo.revparse_single(ref)
    out = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, prefix + entry.name + "/")
            else:
                out[prefix + entry.name] = obj.data.decode()

    walk(commit.tree, "")
    return out


def test_run_commits_each_settled_node_without_touching_the_user_checkout(
    omg, origin, run_dir_check
):
    repo, _ = origin
    work = Path(repo.workdir)
    (work / "tracked.txt").write_text("user edit, not staged\n")
    (work / "untracked.txt").write_text("scratch\n")
    (work / "graph.yaml").write_text(GRAPH + "\n# staged edit\n")
    repo.index.add("graph.yaml")
    repo.index.write()
    head_before = repo.head.target
    index_before = [(e.path, e.id) for e in repo.index]

    res = omg("run", "graph.yaml", "--run-id", "r1", cwd=work)
    assert res.returncode == 4, res.stderr  # paused at the gate
    run_dir_check(work / ".omg/runs/r1")

    repo = pygit2.Repository(str(work))
    assert repo.head.target == head_before
    assert [(e.path, e.id) for e in repo.index] == index_before
    assert (work / "tracked.txt").read_text() == "user edit, not staged\n"
    assert (work / "untracked.txt").read_text() == "scratch\n"
    status = repo.status()
    assert not any(p.startswith(".omg") for p in status), (
        "the run directory must not show in git status"
    )

    files = branch_files(repo, "refs/heads/omg/runs/r1")
    state = json.loads(files["state.json"])
    assert state["paused_at"] == "approve"
    assert state["nodes"]["check"]["verdict"] == "PASS"
    assert "events.jsonl" in files and "artifacts/write.out" in files
    messages = [
        c.message.strip() for c in repo.walk(repo.references["refs/heads/omg/runs/r1"].target)
    ]
    assert any("write PASS" in m for m in messages)
    assert any("check PASS" in m for m in messages)
    assert messages[0].endswith("paused at approve")

    lane = state["worktrees"]["lane"]
    assert lane["branch"] == "omg/work/r1/lane"
    lane_files = branch_files(repo, lane["commit"])
    assert lane_files["work.txt"] == "first\n"


def test_fresh_clone_resumes_from_the_pushed_branch_and_restores_the_worktree(
    omg, origin, tmp_path
):
    repo, bare = origin
    work = Path(repo.workdir)
    res = omg("run", "graph.yaml", "--run-id", "r2", "--push", "origin", cwd=work)
    assert res.returncode == 4, res.stderr

    clone = tmp_path / "clone"
    pygit2.clone_repository(bare.as_uri(), str(clone))
    res = omg(
        "resume", "r2", "--fetch", "origin", "--approve", "approve", "--push", "origin", cwd=clone
    )
    assert res.returncode == 0, res.stdout + res.stderr
    state = json.loads((clone / ".omg/runs/r2/state.json").read_text())
    assert state["status"] == "passed"
    assert [leg["leg"] for leg in state["legs"]] == [1, 2]
    leg1_tip = pygit2.Repository(str(work)).references["refs/heads/omg/runs/r2"].target
    assert state["gates"]["approve"]["state_ref"] == f"commit:{leg1_tip}"
    events = [json.loads(x) for x in (clone / ".omg/runs/r2/events.jsonl").read_text().splitlines()]
    (leg2_start,) = [e for e in events if e["event"] == "run_started" and e["leg"] == 2]
    assert leg2_start["base"] == str(leg1_tip), "a leg records the state commit it started from"
    # finish ran in the restored lane, on top of what leg 1 wrote
    assert (clone / ".omg/runs/r2/artifacts/finish.out").read_text() == "first\nsecond\n"
    # the remote has the whole history, linear
    remote = pygit2.Repository(str(bare))
    tip = remote.references["refs/heads/omg/runs/r2"].target
    msgs = [c.message for c in remote.walk(tip)]
    assert any("leg 1" in m for m in msgs) and any("leg 2" in m for m in msgs)


def test_two_clones_racing_one_run_exactly_one_advances(omg, origin, tmp_path):
    repo, bare = origin
    work = Path(repo.workdir)
    assert omg("run", "graph.yaml", "--run-id", "r3", "--push", "origin", cwd=work).returncode == 4
    a, b = tmp_path / "a", tmp_path / "b"
    for c in (a, b):
        pygit2.clone_repository(bare.as_uri(), str(c))
        # each clone fetches the paused run; deciding needs --approve, so nothing runs yet
        res = omg("resume", "r3", "--fetch", "origin", cwd=c)
        assert res.returncode == 3 and "paused at gate 'approve'" in res.stderr, res.stderr
    ra = omg("resume", "r3", "--fetch", "origin", "--approve", "approve", "--push", "origin", cwd=a)
    assert ra.returncode == 0, ra.stderr
    rb = omg("resume", "r3", "--approve", "approve", "--push", "origin", cwd=b)
    assert rb.returncode == 3
    assert "moved on" in rb.stderr and "resume --fetch origin r3" in rb.stderr
    remote = pygit2.Repository(str(bare))
    tip = remote.references["refs/heads/omg/runs/r3"].target
    state = json.loads(remote[remote[tip].tree["state.json"].id].data)
    assert state["status"] == "passed" and len(state["legs"]) == 2


PR_GRAPH = """\
name: pr-fix
inputs:
  branch: {description: the PR head branch, required: true}
nodes:
  - id: fix
    run: echo "fixed" >> notes.txt
    worktree: {name: pr, branch: "{{ inputs.branch }}", push: true}
"""


def test_a_lane_on_an_existing_branch_commits_and_pushes_back_to_it(omg, origin):
    repo, bare = origin
    work = Path(repo.workdir)
    head = repo.head.target
    repo.branches.local.create("feature", repo[head])
    pygit2.Repository(str(work)).remotes["origin"].push(["refs/heads/feature:refs/heads/feature"])
    (work / "pr.yaml").write_text(PR_GRAPH)

    res = omg(
        "run", "pr.yaml", "--run-id", "p1", "-i", "branch=feature", "--push", "origin", cwd=work
    )
    assert res.returncode == 0, res.stdout + res.stderr

    remote = pygit2.Repository(str(bare))
    tip = remote[remote.references["refs/heads/feature"].target]
    assert tip.parents[0].id == head, "the fix lands on top of the branch, fast-forward"
    assert remote[tip.tree["notes.txt"].id].data == b"fixed\n"
    assert "omg p1 fix" in tip.message
    assert pygit2.Repository(str(work)).head.target == head  # the user's checkout stayed put


def test_clean_removes_checkouts_but_keeps_a_branch_with_unpushed_work(omg, origin):
    repo, _ = origin
    work = Path(repo.workdir)
    assert omg("run", "graph.yaml", "--run-id", "c1", cwd=work).returncode == 4
    lane = work / ".omg/worktrees/c1/lane"
    assert (lane / "work.txt").exists()

    res = omg("clean", "c1", cwd=work)
    assert res.returncode == 0, res.stderr
    repo = pygit2.Repository(str(work))
    assert "omg/work/c1/lane" in repo.branches.local, "unpushed lane commits must survive"
    assert "omg/work/c1/lane" in res.stdout  # the note says what was kept and why
    assert not lane.exists()
    assert "omg/runs/c1" in repo.branches.local  # the run's record is never cleaned away

    pushed = omg("resume", "c1", "--approve", "approve", "--push", "origin", cwd=work)
    assert pushed.returncode == 0, pushed.stderr
    res = omg("clean", "c1", "--remote", "origin", cwd=work)
    assert res.returncode == 0, res.stderr
    assert "omg/work/c1/lane" not in pygit2.Repository(str(work)).branches.local
