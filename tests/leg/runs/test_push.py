"""A leg's record against its remote: ahead is pushed, a lost race's advice continues the run,
and a stale lock a killed git write left is cleared, never a reason to refuse."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
from kit import omg_call

from .helpers import (
    bare_origin,
    child_env,
    clone_of,
    events,
    git_checkout,
    launches,
    log_lines,
    remote_log,
    remote_state,
    run_path,
)

CHAIN = """\
name: chain
nodes:
  - id: first
    run: echo first-$(basename $PWD) >> ../log.txt
  - id: gate
    type: gate
    depends_on: [first]
  - id: second
    depends_on: [gate]
    run: echo second-$(basename $PWD) >> ../log.txt
  - id: third
    depends_on: [second]
    run: echo third-$(basename $PWD) >> ../log.txt
"""
RUN = "refs/heads/omg/runs/r"


def omg_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return omg_call(*args, cwd=cwd, env=child_env())


def _paused(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Checkout a ran the run to its gate and pushed it; b is a second checkout."""
    a = git_checkout(tmp_path / "a", {"g.yaml": CHAIN})
    bare = tmp_path / "origin.git"
    url = bare_origin(a, bare)
    res = omg_in(a, "run", "g.yaml", "--run-id", "r", "--push", "origin")
    assert res.returncode == 4, res.stderr
    return a, clone_of(url, tmp_path / "b"), bare


def _local_head(checkout: Path) -> str:
    return str(pygit2.Repository(str(checkout)).references[RUN].target)


def test_a_run_branch_ahead_of_its_remote_is_pushed_not_refused(tmp_path: Path) -> None:
    a, _, bare = _paused(tmp_path)
    # A leg that committed and never pushed (killed in between, or a push that failed):
    res = omg_in(a, "resume", "r", "--approve", "gate", "--max-nodes", "1")
    assert res.returncode == 4, res.stderr
    ahead = _local_head(a)
    assert remote_log(bare, RUN)[0] != ahead
    res = omg_in(a, "resume", "r", "--push", "origin")
    assert res.returncode == 0, res.stderr
    assert "another leg advanced" not in res.stderr
    assert remote_log(bare, RUN)[0] == _local_head(a)
    assert ahead in remote_log(bare, RUN)  # fast-forward: what was ahead, then the new leg
    assert remote_state(bare, "r")["status"] == "passed"


def test_a_finished_run_ahead_of_its_remote_is_pushed_by_a_leg_with_nothing_to_do(
    tmp_path: Path,
) -> None:
    a, _, bare = _paused(tmp_path)
    assert omg_in(a, "resume", "r", "--approve", "gate").returncode == 0  # not pushed
    res = omg_in(a, "resume", "r", "--push", "origin")
    assert res.returncode == 0 and "nothing to do" in res.stdout, res.stderr
    assert remote_log(bare, RUN)[0] == _local_head(a)
    assert remote_state(bare, "r")["status"] == "passed"


def test_the_advice_a_diverged_leg_is_given_continues_the_run(tmp_path: Path) -> None:
    a, b, bare = _paused(tmp_path)
    assert omg_in(b, "resume", "--fetch", "origin", "r").returncode == 3  # paused: fetched only
    mine = omg_in(b, "resume", "r", "--approve", "gate")  # b decides and runs, locally
    assert mine.returncode == 0, mine.stderr
    theirs = omg_in(a, "resume", "r", "--approve", "gate", "--max-nodes", "1", "--push", "origin")
    assert theirs.returncode == 4, theirs.stderr  # a decided too, ran `second`, and pushed
    kept_tip = _local_head(b)

    refused = omg_in(b, "resume", "r", "--push", "origin")
    assert refused.returncode == 3, refused.stderr
    said = " ".join(refused.stderr.split())
    assert "diverged" in said and "each with commits the other lacks" in said
    advice = "omg resume --fetch origin r --push origin"
    assert f"`{advice}`" in said

    done = omg_in(b, *advice.split()[1:])  # exactly what it was told
    assert done.returncode == 0, done.stderr
    assert "kept locally as kept/omg-run-r-" in done.stderr
    state = remote_state(bare, "r")
    assert state["status"] == "passed" and len(state["legs"]) == 3
    ran_b = [e["node_id"] for e in events(run_path(b, "r")) if e["event"] == "node_started"]
    assert ran_b == ["first", "second", "third"]  # a's record, then b's leg 3: only `third`
    assert log_lines(tmp_path) == ["first-a", "second-b", "third-b", "second-a", "third-b"]
    repo = pygit2.Repository(str(b))
    kept = [r for r in repo.references if r.startswith("refs/heads/kept/omg-run-r-")]
    assert [str(repo.references[k].target) for k in kept] == [kept_tip]  # b's own leg, kept


def test_a_stale_ref_lock_from_a_killed_commit_is_cleared_by_the_next_leg(
    tmp_path: Path,
) -> None:
    a, _, bare = _paused(tmp_path)
    lock = a / ".git" / "refs" / "heads" / "omg" / "runs" / "r.lock"
    lock.write_text("a ref update libgit2 never finished\n")  # what a SIGKILL mid-commit leaves
    res = omg_in(a, "resume", "r", "--approve", "gate", "--push", "origin")
    assert res.returncode == 0, res.stderr
    assert "git fsck" not in res.stderr
    assert f"removed {lock}" in " ".join(res.stderr.split())
    assert not lock.exists()
    assert remote_state(bare, "r")["status"] == "passed"
    assert launches(events(run_path(a, "r")), leg=2) == [("second", 0), ("third", 0)]


FAILING = """\
name: failing
nodes:
  - id: ok
    run: echo ok
  - id: bad
    depends_on: [ok]
    run: exit 1
"""


def test_a_leg_killed_before_its_last_commit_is_committed_and_pushed_by_the_next(
    tmp_path: Path,
) -> None:
    """The run failed, and its leg was killed before committing (and pushing) its end: the next
    leg refuses to run a failed run, but first puts its end on record."""
    a = git_checkout(tmp_path / "a", {"g.yaml": FAILING})
    bare = tmp_path / "origin.git"
    bare_origin(a, bare)
    assert omg_in(a, "run", "g.yaml", "--run-id", "r", "--push", "origin").returncode == 1
    repo, remote = pygit2.Repository(str(a)), pygit2.Repository(str(bare))
    end = repo.references[RUN].peel(pygit2.Commit)
    before = str(end.parents[0].id)  # as the kill left them: the end in the directory only
    repo.references[RUN].set_target(before)
    remote.references[RUN].set_target(before)
    repo.references["refs/remotes/origin/omg/runs/r"].set_target(before)
    assert remote_state(bare, "r")["status"] != "failed"

    res = omg_in(a, "resume", "r", "--push", "origin")
    assert res.returncode == 3 and "failed at bad" in res.stderr, res.stderr
    state = remote_state(bare, "r")
    assert state["status"] == "failed" and state["legs"][-1]["outcome"] == "failed"
    assert remote_log(bare, RUN)[1] == before  # one commit on top: the directory's end
