"""When a leg pushes (leg/commits): its start, pause and end always; a node that settles within
OMG_PUSH_EVERY of the last push is committed and not pushed; one that settles after a longer
spell (an agent node that took minutes) is pushed as it settles."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from omg.errors import UsageError
from omg.leg.commits import PUSH_EVERY, attach, push_every
from omg.schedule import LegResult
from omg.state import empty_state
from omg.state.recorder import Recorder
from omg.state.store import RunDir


def test_pushes_fall_at_checkpoints_and_after_a_long_node(tmp_path: Path) -> None:
    work = tmp_path / "work"
    repo = pygit2.init_repository(str(work), initial_head="main")
    sig = pygit2.Signature("t", "t@example.com")
    repo.create_commit("HEAD", sig, sig, "init", repo.TreeBuilder().write(), [])
    pygit2.init_repository(str(tmp_path / "origin.git"), bare=True)
    repo.remotes.create("origin", (tmp_path / "origin.git").as_uri())
    commits = attach(work, "r", push="origin", base="HEAD", warn=lambda m: None, tokens=())
    assert commits is not None
    now = [1000.0]
    commits.clock = lambda: now[0]
    pushed: list[str] = []
    real = commits.repo.push
    commits.repo.push = lambda remote, specs: (pushed.append(specs[0]), real(remote, specs))[1]  # type: ignore[method-assign]

    rd = RunDir(work / ".omg" / "runs" / "r")
    rd.lock()
    rec = Recorder(rd, empty_state(), leg=1)
    graph = {"name": "g", "nodes": [{"id": f"n{i}", "run": "true"} for i in range(4)]}
    rec.emit("run_started", graph=graph, graph_source="g.yaml", inputs={})  # type: ignore[arg-type]
    commits.before_leg(rec)
    commits.settled(rec, "", "", 0)  # the leg's start: pushed
    assert len(pushed) == 1
    for i, wait in enumerate([0.5, 1.0, PUSH_EVERY - 2]):  # fast nodes: committed, not pushed
        now[0] += wait
        rec.emit("node_passed", node_id=f"n{i}", verdict="PASS")
        commits.settled(rec, f"n{i}", "PASS", 0)
    assert len(pushed) == 1
    now[0] += 300  # an agent node that took five minutes: pushed as it settles
    rec.emit("node_passed", node_id="n3", verdict="PASS")
    commits.settled(rec, "n3", "PASS", 0)
    assert len(pushed) == 2
    remote = pygit2.Repository(str(tmp_path / "origin.git"))
    assert str(remote.references["refs/heads/omg/runs/r"].target) == commits.head
    rec.emit("run_finished", outcome="passed")
    commits.after_leg(rec, LegResult("passed"))  # the end: pushed, right after the last push
    assert len(pushed) == 3
    rd.close()


@pytest.mark.parametrize(("raw", "want"), [("", PUSH_EVERY), ("0", 0.0), (" 2.5 ", 2.5)])
def test_the_push_interval_comes_from_omg_push_every(raw: str, want: float) -> None:
    assert push_every({"OMG_PUSH_EVERY": raw}) == want


@pytest.mark.parametrize("raw", ["soon", "-1", "nan", "inf"])
def test_a_push_interval_that_is_no_number_of_seconds_is_refused(raw: str) -> None:
    with pytest.raises(UsageError, match="OMG_PUSH_EVERY"):
        push_every({"OMG_PUSH_EVERY": raw})
