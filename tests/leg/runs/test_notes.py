"""Notes recorded off the run branch, folded in by legs: once each, where a leg finds them, and
never at the cost of a leg's record — a damaged one is left on its ref, not folded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygit2
import pytest

from omg.errors import StateError
from omg.graph.load import load_graph
from omg.leg import notes
from omg.leg.commits import RunCommits, attach
from omg.leg.decisions import Decision
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, resume_run, start_run
from omg.state import fold
from omg.state.store import RunDir

from .helpers import events, of_kind

GATED = """\
name: gated
nodes:
  - id: build
    run: echo built
  - id: ok
    type: gate
    depends_on: [build]
  - id: ship
    depends_on: [ok]
    run: echo shipped
"""
SIG = pygit2.Signature("Test", "test@example.com")


def checkout(tmp_path: Path) -> Path:
    """A repository holding the graph, with a bare ``origin`` that has its main branch."""
    work = tmp_path / "work"
    repo = pygit2.init_repository(str(work), initial_head="main")
    (work / "g.yaml").write_text(GATED)
    repo.index.add("g.yaml")
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "graph", repo.index.write_tree(), [])
    bare = tmp_path / "origin.git"
    pygit2.init_repository(str(bare), bare=True)
    repo.remotes.create("origin", bare.as_uri()).push(["refs/heads/main:refs/heads/main"])
    return work


def environment(work: Path, said: list[str]) -> Environment:
    env = Environment(runs_dir=work / ".omg" / "runs", root=work, warn=said.append)
    env.commits = attach(work, "r", push="origin", base="HEAD", warn=said.append, tokens=())
    return env


def commits(env: Environment) -> RunCommits:
    assert env.commits is not None
    return env.commits


def refused(env: Environment, note_id: str, by: str) -> bool:
    fields: Any = {"node_id": "ok", "by": by, "reason": "no write access", "command": note_id}
    rundir = RunDir(env.runs_dir / "r")
    return notes.note("r", rundir, commits(env), "decision_refused", fields, note_id, "refused")


def test_notes_made_at_a_pause_are_folded_in_once_by_the_next_leg(tmp_path: Path) -> None:
    work, said = checkout(tmp_path), []
    graph = load_graph(work / "g.yaml")
    env = environment(work, said)
    start_run(graph, work / "g.yaml", {}, env, LegOptions(1), run_id="r")
    rundir = work / ".omg" / "runs" / "r"
    branch = commits(env).repo.run_head("r")
    assert refused(env, "refused-c1", "stranger") is True
    assert refused(env, "refused-c1", "stranger") is False  # a re-run: on record already
    assert refused(env, "refused-c2", "reader") is True
    assert commits(env).repo.run_head("r") == branch  # the run branch is not touched

    env = environment(work, said)
    decision = Decision("ok", True, "octocat", "fine")
    end = resume_run("r", env, LegOptions(1), decision=decision)
    assert end.state["status"] == "passed"
    evs = events(rundir)
    kinds = [(e["event"], e["leg"], e.get("note")) for e in evs]
    at = kinds.index(("run_started", 2, None))
    # after leg 1 closed, before leg 2 opened: in the leg they were noted in, in their order
    assert kinds[at - 3 : at] == [
        ("run_finished", 1, None),
        ("decision_refused", 1, "refused-c1"),
        ("decision_refused", 1, "refused-c2"),
    ]
    assert commits(env).notes() == {}  # dropped once the run branch carried them
    assert said == []


def test_a_note_made_while_a_leg_runs_is_folded_in_at_its_end(tmp_path: Path) -> None:
    work, said = checkout(tmp_path), []
    graph = load_graph(work / "g.yaml")
    env = environment(work, said)

    def note_mid_leg(ev: dict[str, Any], state: Any) -> None:
        if ev["event"] == "node_passed" and ev["node_id"] == "build":
            other = environment(work, said)  # another job, while this leg runs
            assert refused(other, "refused-c7", "stranger")

    env.listeners = [note_mid_leg]
    end = start_run(graph, work / "g.yaml", {}, env, LegOptions(1), run_id="r")
    assert end.result is not None and end.result.paused_at == "ok"
    evs = events(work / ".omg" / "runs" / "r")
    assert [(e["event"], e["leg"]) for e in evs[-2:]] == [
        ("run_finished", 1),
        ("decision_refused", 1),
    ]
    assert commits(env).notes() == {} and said == []
    head = commits(env).repo.run_head("r")
    assert commits(env).pause_ref(notes.progress_seq(RunDir(work / ".omg" / "runs" / "r"))) == head


def test_a_leg_that_finds_its_run_superseded_in_a_note_runs_nothing(tmp_path: Path) -> None:
    work, said = checkout(tmp_path), []
    graph = load_graph(work / "g.yaml")
    env = environment(work, said)
    start_run(graph, work / "g.yaml", {}, env, LegOptions(1), run_id="r")
    fields: Any = {"head_sha": "b" * 40, "by": "octocat", "reason": "moved"}
    rundir = RunDir(work / ".omg" / "runs" / "r")
    assert notes.note("r", rundir, commits(env), "run_superseded", fields, "superseded-b", "x")
    env = environment(work, said)
    with pytest.raises(StateError, match="superseded by head bbbbbbbbbbbb; nothing more runs"):
        resume_run("r", env, LegOptions(1), decision=Decision("ok", True, "octocat"))
    repo = commits(env).repo
    branch = json.loads(repo.read_run_file("r", "state.json"))
    assert branch["status"] == "superseded" and branch["gates"] == {}  # on record, undecided
    assert of_kind(events(rundir.path), "run_started")[-1]["leg"] == 1  # no leg 2 began
    assert commits(env).notes() == {}


def test_a_damaged_note_is_left_on_its_ref_and_never_folded(tmp_path: Path) -> None:
    work, said = checkout(tmp_path), []
    graph = load_graph(work / "g.yaml")
    env = environment(work, said)
    start_run(graph, work / "g.yaml", {}, env, LegOptions(1), run_id="r")
    repo = commits(env).repo
    bad = json.dumps({"event": "gate_approved", "ts": "t", "leg": 1, "note": "forged"})
    repo.record_note("r", "forged", bad.encode(), "a forged approval")
    repo.push("origin", ["refs/omg/notes/r/forged:refs/omg/notes/r/forged"])
    env = environment(work, said)
    resume_run("r", env, LegOptions(1), decision=Decision("ok", True, "octocat"))
    evs = events(work / ".omg" / "runs" / "r")
    assert len(of_kind(evs, "gate_approved")) == 1 and of_kind(evs, "gate_approved")[0]["by"] == (
        "octocat"
    )
    assert list(commits(env).notes()) == ["forged"]
    assert said and all("note forged of run r is not readable" in s for s in said)


NOTE = {"event": "decision_refused", "ts": "2025-01-01T00:00:00.000Z", "leg": 2, "note": "n1"}


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({**NOTE, "event": "gate_approved"}, "'gate_approved' is not an event a note records"),
        ({**NOTE, "node_id": "ok", "verdict": "PASS"}, "carries no verdict"),
        ({**NOTE, "note": "n2"}, "names note 'n2', not 'n1'"),
        ({**NOTE, "leg": 0}, "leg 0 is not a leg number"),
        ({**NOTE, "leg": True}, "leg True is not a leg number"),
        ({**NOTE, "by": 7}, "its fields are strings"),
        ([NOTE], "a note is a JSON object"),
    ],
)
def test_a_note_omg_could_not_have_written_is_refused(data: Any, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        notes.parse("n1", json.dumps(data).encode())


def test_a_good_note_parses_to_the_event_it_folds_in_as() -> None:
    data = {**NOTE, "node_id": "ok", "by": "mona", "reason": "r", "command": "/omg approve ok"}
    assert notes.parse("n1", json.dumps(data).encode()).event == data


def test_a_dispatch_folded_in_a_leg_later_lands_on_the_leg_that_sent_it() -> None:
    def ev(seq: int, kind: str, leg: int, **more: Any) -> dict[str, Any]:
        envelope = {"schema": 1, "seq": seq, "ts": "t", "run_id": "r", "leg": leg}
        return {**envelope, "event": kind, **more}

    stream = [
        ev(1, "run_started", 1),
        ev(2, "run_finished", 1, outcome="paused", reason="leg_budget"),
        ev(3, "run_started", 2),
        ev(4, "leg_dispatched", 1, workflow_run_id="77", note="dispatched-leg1"),
    ]
    legs = fold(stream)["legs"]  # type: ignore[arg-type]
    assert legs[0]["dispatched"] == {"workflow_run_id": "77"} and "dispatched" not in legs[1]
