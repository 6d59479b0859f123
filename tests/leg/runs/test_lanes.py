"""A lane after a killed leg: work its run never recorded is kept aside, never a refusal."""

from __future__ import annotations

from pathlib import Path

import pygit2
from kit import omg_call

from .helpers import (
    child_env,
    events,
    git_checkout,
    kill_group,
    launches,
    log_lines,
    popen_omg,
    run_path,
    wait_for,
)

# The node commits in its lane itself (as an agent may), then works on until told to stop.
COMMITTING = """\
name: committing
nodes:
  - id: edit
    worktree: lane
    run: |
      n=$(cat ../../../../count 2>/dev/null || echo 0); echo $((n+1)) > ../../../../count
      echo "attempt $n" > work.txt; echo wip > scratch.txt
      git add work.txt && git -c user.name=a -c user.email=a@b commit -qm "attempt $n"
      echo edit >> ../../../../log.txt
      while [ ! -f ../../../../go ]; do sleep 0.01; done
"""


def test_a_lane_holding_commits_its_run_never_recorded_is_set_aside_and_the_node_reruns(
    tmp_path: Path,
) -> None:
    root = git_checkout(tmp_path / "w", {"g.yaml": COMMITTING})
    rd = run_path(root, "r")
    first = popen_omg(root, "run", "g.yaml", "--run-id", "r")
    wait_for(lambda: "edit" in log_lines(root))
    kill_group(first)  # the lane now holds a commit (and a file) no event recorded
    repo = pygit2.Repository(str(root))
    lane = "refs/heads/omg/work/r/lane"
    unrecorded = str(repo.references[lane].target)
    base = str(repo.references["refs/omg/base/r/lane"].target)
    assert unrecorded != base

    (root / "go").touch()
    res = omg_call("resume", "r", cwd=root, env=child_env())  # the resume: in this process
    assert res.returncode == 0, res.stderr
    assert launches(events(rd)) == [("edit", 0), ("edit", 0)]
    repo = pygit2.Repository(str(root))
    kept = [r for r in repo.references if r.startswith("refs/heads/kept/omg-work-r-lane-")]
    assert len(kept) == 1
    tip = repo.references[kept[0]].peel(pygit2.Commit)
    assert tip.parents[0].id == pygit2.Oid(hex=unrecorded)  # the killed attempt's commit …
    assert tip.tree["scratch.txt"]  # … and what it left uncommitted, committed on top of it
    assert str(tip.parents[0].parents[0].id) == base
    now = repo.references[lane].peel(pygit2.Commit)  # omg's commit of the node's leftovers,
    assert now.parents[0].message == "attempt 1\n"  # on the re-run's own commit,
    assert now.parents[0].parents[0].id == pygit2.Oid(hex=base)  # on where the lane started
    assert now.tree["work.txt"].data == b"attempt 1\n"
    assert events(rd)[-2]["worktree_commit"] == str(now.id)
