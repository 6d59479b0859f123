"""Fan-out across machines, simulated the way GitHub runs `omg-fanout.yml`: a plan job, one
fresh clone per matrix entry (all started at once), and a fold job — wave by wave."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest

from omg.state.fold import stable_view

from .kit import GRAPH_PATH, Job, Repo, Running

FANOUT = "omg-fanout.yml"
TWELVE = [f"t{i:02d}" for i in range(1, 13)]

WIDE = (
    "name: wide\nconcurrency: 12\nnodes:\n"
    + "".join(f"  - {{id: {n}, run: 'echo {n} checked'}}\n" for n in TWELVE)
    + f"  - {{id: report, depends_on: [{', '.join(TWELVE)}], run: 'echo all {len(TWELVE)}'}}\n"
)

Make = Callable[[str], Repo]


@dataclass
class Wave:
    plan: Job
    matrix: dict[str, Any]
    base: str
    jobs: dict[str, Job]
    fold: Job


def plan(gh: Repo, rid: str) -> Job:
    return gh.run(
        "workflow_dispatch",
        gh.dispatch_event({"run-id": rid}),
        command=("plan", rid, "--matrix", "--fetch", "origin", "--start", GRAPH_PATH),
        workflow=FANOUT,
    )


def node_job(gh: Repo, rid: str, entry: str, base: str, **kw: Any) -> Job | Running:
    extra = {"OMG_RUN_ID": rid, "OMG_NODE": entry, "OMG_BASE": base, **kw.pop("extra", {})}
    return gh.job(
        "workflow_dispatch",
        gh.dispatch_event({"run-id": rid}),
        command=("leg",),
        workflow=FANOUT,
        extra=extra,
        **kw,
    )


def fold(gh: Repo, rid: str, base: str) -> Job:
    extra = {"OMG_RUN_ID": rid, "OMG_FOLD": "true", "OMG_BASE": base}
    return gh.run(
        "workflow_dispatch", gh.dispatch_event({"run-id": rid}), workflow=FANOUT, extra=extra
    )


def wave(gh: Repo, rid: str, *, skip: tuple[str, ...] = ()) -> Wave:
    """One round: plan, every matrix entry started at once (but ``skip``), then the fold."""
    p = plan(gh, rid)
    assert p.rc == 0, p.stderr
    matrix = json.loads(p.outputs["matrix"])
    base = p.outputs["base"]
    running = {
        e["node"]: node_job(gh, rid, e["node"], base, start=True)
        for e in matrix["include"]
        if e["node"] not in skip
    }
    jobs = {}
    for name, r in running.items():
        assert isinstance(r, Running)
        jobs[name] = r.wait()
        assert jobs[name].rc in (0, 1), jobs[name].stderr
    f = fold(gh, rid, base)
    assert f.rc in (0, 1), f.stderr
    return Wave(p, matrix, base, jobs, f)


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    """A directory every job's nodes see (each job has its own clone): counters, barriers."""
    path = tmp_path / "shared"
    path.mkdir()
    return path


def wait_for(cond: Callable[[], bool], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def records(gh: Repo, rid: str) -> list[str]:
    repo = pygit2.Repository(str(gh.origin))
    return sorted(r for r in repo.references if r.startswith(f"refs/omg/fanout/{rid}/"))


def solo(gh: Repo, rid: str) -> dict[str, Any]:
    """The state of the same graph run on one machine, in one leg (`omg run`, no commits)."""
    where = gh.root / "solo"
    gh.checkout(where, "refs/heads/main", None)
    done = subprocess.run(
        [sys.executable, "-m", "omg", "run", GRAPH_PATH, "--run-id", rid, "--no-commit"],
        cwd=where, capture_output=True, text=True, env={**os.environ, "GITHUB_ACTIONS": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    state: dict[str, Any] = json.loads((where / f".omg/runs/{rid}/state.json").read_text())
    return state


def comparable(state: dict[str, Any]) -> dict[str, Any]:
    """What one machine and a fan-out must agree on: all but timings and leg bookkeeping."""
    view: dict[str, Any] = dict(stable_view(state))  # type: ignore[arg-type]
    for key in ("legs", "seq", "run_id"):
        view.pop(key)
    return view


def test_a_twelve_node_fan_out_ends_as_the_same_graph_run_in_one_leg(github: Make) -> None:
    gh = github(WIDE)
    first = wave(gh, "wide")
    assert [e["node"] for e in first.matrix["include"]] == TWELVE
    assert first.plan.outputs["count"] == "12"
    assert all(j.outputs["status"] == "published" for j in first.jobs.values())
    assert first.fold.outputs["status"] == "continuing", first.fold.stderr
    assert first.fold.outputs["next"] == "dispatch"
    assert records(gh, "wide") == []  # the fold deleted every record it took in
    [sent] = gh.api.runs
    assert sent["workflow"] == FANOUT and sent["inputs"] == {"run-id": "wide"}
    second = wave(gh, "wide")
    assert [e["node"] for e in second.matrix["include"]] == ["report"]
    assert second.fold.outputs["status"] == "passed", second.fold.stderr
    fanned = gh.run_state("wide")
    legs = fanned["legs"]
    assert [leg.get("fanout", {}).get("folded") for leg in legs] == [None, TWELVE, ["report"]]

    assert comparable(fanned) == comparable(solo(gh, "wide"))
    starts = [e["node_id"] for e in gh.run_events("wide") if e["event"] == "node_started"]
    assert sorted(starts) == sorted([*TWELVE, "report"])  # each node ran exactly once


def starts(gh: Repo, rid: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in gh.run_events(rid):
        if e["event"] == "node_started":
            out[e["node_id"]] = out.get(e["node_id"], 0) + 1
    return out


def slow_graph(shared: str) -> str:
    """t01..t03, where t02 hangs (its pid noted) until ``shared``/go exists."""
    hang = f"test -f {shared}/go || {{ echo $$ > {shared}/pid; exec sleep 60; }}; echo t02"
    return (
        "name: slow\nconcurrency: 3\nnodes:\n"
        "  - {id: t01, run: 'echo t01'}\n"
        f"  - {{id: t02, run: '{hang}'}}\n"
        "  - {id: t03, run: 'echo t03'}\n"
    )


def test_a_killed_matrix_job_leaves_its_node_to_the_next_wave_and_nothing_else_reruns(
    github: Make, shared: Path
) -> None:
    gh = github(slow_graph(str(shared)))
    p = plan(gh, "slow")
    base = p.outputs["base"]
    jobs = {n: node_job(gh, "slow", n, base, start=True) for n in ("t01", "t02", "t03")}
    wait_for(lambda: (shared / "pid").exists())
    killed = jobs.pop("t02")
    assert isinstance(killed, Running)
    killed.proc.kill()  # the runner is lost: omg gets no chance to publish anything
    killed.proc.wait()
    os.kill(int((shared / "pid").read_text()), signal.SIGKILL)
    for job in jobs.values():
        assert isinstance(job, Running)
        assert job.wait().rc == 0
    assert records(gh, "slow") == ["refs/omg/fanout/slow/t01", "refs/omg/fanout/slow/t03"]
    f = fold(gh, "slow", base)
    assert f.rc == 0, f.stderr
    assert "no record from t02: planned again" in f.summary
    assert gh.run_state("slow")["legs"][-1]["fanout"] == {
        "folded": ["t01", "t03"],
        "missing": ["t02"],
    }
    (shared / "go").touch()
    again = wave(gh, "slow")
    assert again.matrix == {"include": [{"node": "t02", "nodes": "t02"}]}
    assert again.fold.outputs["status"] == "passed"
    assert starts(gh, "slow") == {"t01": 1, "t02": 1, "t03": 1}


def test_a_rerun_matrix_job_executes_nothing_before_or_after_the_fold(github: Make) -> None:
    gh = github(WIDE)
    p = plan(gh, "wide")
    base = p.outputs["base"]
    first = node_job(gh, "wide", "t01", base)
    assert isinstance(first, Job) and first.outputs["status"] == "published"
    again = node_job(gh, "wide", "t01", base, attempt=2)  # "Re-run job" before the fold
    assert isinstance(again, Job) and again.rc == 0, again.stderr
    assert again.outputs["status"] == "skipped"
    assert "published already" in again.stderr
    f = fold(gh, "wide", base)
    assert f.rc == 0, f.stderr
    late = node_job(gh, "wide", "t01", base, attempt=3)  # and after it
    assert isinstance(late, Job) and late.outputs["status"] == "skipped"
    assert "folded already" in late.stderr
    refold = fold(gh, "wide", base)  # a re-run fold job changes nothing either
    assert refold.outputs["status"] == "skipped" and "folded already" in refold.stderr
    assert starts(gh, "wide") == {"t01": 1}
    assert records(gh, "wide") == []


def test_a_stale_record_is_ignored_by_the_fold_and_deleted(github: Make) -> None:
    gh = github(WIDE)
    p = plan(gh, "wide")
    base = p.outputs["base"]
    assert node_job(gh, "wide", "t01", base).rc == 0  # type: ignore[union-attr]
    origin = pygit2.Repository(str(gh.origin))
    old = origin.references["refs/omg/fanout/wide/t01"].target
    assert fold(gh, "wide", base).rc == 0
    origin.references.create("refs/omg/fanout/wide/t01", old)  # a fold that died mid-clean-up
    second = wave(gh, "wide")
    assert "t01" not in [e["node"] for e in second.matrix["include"]]
    assert "dropped stale records: t01" in second.fold.stderr
    assert gh.run_state("wide")["legs"][-1]["fanout"]["stale"] == ["t01"]
    assert starts(gh, "wide")["t01"] == 1
    assert records(gh, "wide") == []


def loop_graph(shared: str) -> str:
    """impl → review, whose first verdict fails and sends its findings back to impl."""
    verdict = f"echo v >> {shared}/verdicts; [ $(grep -c v {shared}/verdicts) -ge 2 ]"
    return f"""\
name: loop
nodes:
  - id: impl
    run: echo impl >> {shared}/log
  - id: review
    depends_on: [impl]
    run: '{verdict} || {{ echo "fix the thing"; exit 1; }}'
    feedback: {{rerun: impl, max: 2}}
"""


def test_a_feedback_arc_fired_in_a_matrix_job_is_rerun_by_the_next_wave(
    github: Make, shared: Path
) -> None:
    gh = github(loop_graph(str(shared)))
    waves = []
    while not waves or waves[-1].fold.outputs["next"] == "dispatch":
        waves.append(wave(gh, "loop"))
        if len(waves) == 2:  # the review job fired the arc; the fold planned the body again
            review = gh.run_state("loop")["nodes"]["review"]
            assert review["round"] == 1 and review["verdict"] == ""
        assert len(waves) < 6
    assert [[e["node"] for e in w.matrix["include"]] for w in waves] == [
        ["impl"], ["review"], ["impl"], ["review"]
    ]  # fmt: skip
    assert waves[-1].fold.outputs["status"] == "passed"
    assert (shared / "log").read_text() == "impl\nimpl\n"
    events = gh.run_events("loop")
    [fired] = [e for e in events if e["event"] == "node_retried"]
    assert fired["reason"] == "feedback" and fired["node_id"] == "review"
    state = gh.run_state("loop")
    assert state["nodes"]["impl"]["round"] == 1 and state["hops"] == 1


LANES = """\
name: lanes
concurrency: 4
nodes:
  - {id: a, worktree: w, run: 'echo from a > a.txt'}
  - {id: b, worktree: w, run: 'echo from b > b.txt'}
  - {id: c, run: 'echo c'}
  - {id: d, worktree: w, depends_on: [a, b, c], run: 'cat a.txt b.txt'}
"""


def test_nodes_sharing_a_lane_run_on_one_machine_and_the_lane_travels_to_the_next(
    github: Make,
) -> None:
    gh = github(LANES)
    first = wave(gh, "lanes")
    assert first.matrix == {"include": [{"node": "a", "nodes": "a b"}, {"node": "c", "nodes": "c"}]}
    assert "entry a published (a passed, b passed)" in first.jobs["a"].stderr
    origin = pygit2.Repository(str(gh.origin))
    lane = origin.revparse_single("refs/heads/omg/work/lanes/w")
    assert {"a.txt", "b.txt"} <= {e.name for e in lane.peel(pygit2.Commit).tree}
    second = wave(gh, "lanes")
    assert second.matrix["include"] == [{"node": "d", "nodes": "d"}]
    assert second.fold.outputs["status"] == "passed"
    artifact = origin.revparse_single("refs/heads/omg/runs/lanes:artifacts/d.out")
    assert artifact.data.decode() == "from a\nfrom b\n"
    assert gh.run_state("lanes")["worktrees"]["w"]["commit"] == str(
        origin.revparse_single("refs/heads/omg/work/lanes/w").id
    )


#: How long a wait of the order property may take before it counts as a hang: twelve jobs start
#: at once, which on a loaded two-core machine takes minutes, not seconds.
HANG = 600


def turned_graph(shared: str) -> str:
    """Twelve nodes, each blocked (using no CPU) on the FIFO ``shared``/turn-<node> until the
    test opens it: the order they finish in is the test's, whatever the machine's speed."""
    return "name: wide\nconcurrency: 12\nnodes:\n" + "".join(
        f"  - {{id: {n}, run: 'touch {shared}/ready-{n}; read go < {shared}/turn-{n}; echo {n}'}}\n"
        for n in TWELVE
    )


def _release(fifo: Path) -> None:
    """Let the node reading ``fifo`` go on (once it is reading it)."""

    def opened() -> bool:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:  # ENXIO: the node has not opened it yet
            assert exc.errno == errno.ENXIO, exc
            return False
        os.write(fd, b"go\n")
        os.close(fd)
        return True

    wait_for(opened, timeout=HANG)


def _has_passed(events: Path) -> bool:
    lines = events.read_text().splitlines() if events.exists() else []
    return any(json.loads(line)["event"] == "node_passed" for line in lines)


def test_the_fold_is_the_same_whatever_order_the_matrix_jobs_finished_in(
    github: Make, shared: Path
) -> None:
    gh = github(turned_graph(str(shared)))
    base = plan(gh, "wide").outputs["base"]
    origin = pygit2.Repository(str(gh.origin))
    for n in TWELVE:
        os.mkfifo(shared / f"turn-{n}")
    folds: list[tuple[str, list[str]]] = []
    for order in (
        TWELVE,
        TWELVE[::-1],
        [TWELVE[i] for i in (5, 0, 11, 3, 8, 1, 10, 6, 2, 9, 4, 7)],
    ):
        running = {n: node_job(gh, "wide", n, base, start=True) for n in TWELVE}
        wait_for(lambda: all((shared / f"ready-{n}").exists() for n in TWELVE), timeout=HANG)
        for node in order:  # each finishes, its node_passed recorded, before the next may
            job = running[node]
            assert isinstance(job, Running)
            _release(shared / f"turn-{node}")
            events = job.work / ".omg/runs/wide/events.jsonl"
            wait_for(lambda events=events: _has_passed(events), timeout=HANG)
            time.sleep(0.002)  # the next one's node_passed is stamped a later millisecond
        for r in running.values():
            assert isinstance(r, Running) and r.wait().rc == 0
        finished = sorted(TWELVE, key=lambda n: _passed_at(origin, n))
        assert finished == order  # the jobs really did finish in this order
        f = fold(gh, "wide", base)
        assert f.rc == 0, f.stderr
        state = gh.run_state("wide")
        for leg in state["legs"]:
            for key in ("started", "finished", "dispatched", "ci"):
                leg.pop(key, None)
        for rec in state["nodes"].values():
            rec.pop("duration_s")
        events = [e for e in gh.run_events("wide") if e["leg"] == 2]
        folds.append((json.dumps(state, sort_keys=True), [e["node_id"] for e in events[1:-1]]))
        origin.references["refs/heads/omg/runs/wide"].set_target(base)  # the next trial
        for n in TWELVE:
            (shared / f"ready-{n}").unlink()
    assert folds[0] == folds[1] == folds[2]
    assert folds[0][1] == [n for n in TWELVE for _ in ("started", "passed")]


def _passed_at(origin: pygit2.Repository, node: str) -> str:
    """When entry ``node``'s job recorded its node passed (from its published record)."""
    commit = origin.revparse_single(f"refs/omg/fanout/wide/{node}").peel(pygit2.Commit)
    lines = commit.tree["events.jsonl"].data.decode().splitlines()
    [passed] = [json.loads(ln) for ln in lines if '"node_passed"' in ln]
    return str(passed["ts"])


def test_a_record_about_nodes_outside_its_entry_is_refused_and_the_entry_planned_again(
    github: Make,
) -> None:
    gh = github(WIDE)
    base = plan(gh, "wide").outputs["base"]
    assert node_job(gh, "wide", "t01", base).rc == 0  # type: ignore[union-attr]
    origin = pygit2.Repository(str(gh.origin))
    ref = "refs/omg/fanout/wide/t01"
    record = origin.revparse_single(ref).peel(pygit2.Commit)
    text = record.tree["events.jsonl"].data.decode()
    forged = text.replace('"node_id":"t01"', '"node_id":"t02"')  # claims another entry's node
    assert forged != text
    tree = origin.TreeBuilder(record.tree)
    tree.insert("events.jsonl", origin.create_blob(forged.encode()), pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("x", "x@example.com")
    bad = origin.create_commit(None, sig, sig, "forged", tree.write(), record.parent_ids)
    origin.references[ref].set_target(bad)
    f = fold(gh, "wide", base)
    assert f.rc == 0, f.stderr
    assert "holds a node_started of t02" in f.stderr
    state = gh.run_state("wide")
    assert state["legs"][-1]["fanout"] == {"folded": [], "missing": TWELVE, "stale": ["t01"]}
    assert all(rec.get("verdict", "") == "" for rec in state["nodes"].values())
    assert records(gh, "wide") == []


def test_two_waves_in_a_row_that_publish_nothing_stop_dispatching(github: Make) -> None:
    gh = github(WIDE)
    first = fold(gh, "wide", plan(gh, "wide").outputs["base"])  # every matrix job lost
    assert first.outputs["next"] == "dispatch"
    second = fold(gh, "wide", plan(gh, "wide").outputs["base"])
    assert second.rc == 0 and second.outputs["next"] == "none"
    assert "two waves in a row published nothing" in second.summary
    assert len(gh.api.runs) == 1


def test_a_loop_exhausted_in_a_matrix_job_pauses_the_run_at_its_gate_after_the_fold(
    github: Make, shared: Path
) -> None:
    text = loop_graph(str(shared)).replace("-ge 2", "-ge 99")
    text = text.replace("max: 2", "max: 1, on_exhausted: gate")
    gh = github(text)
    waves = [wave(gh, "loop")]
    while waves[-1].fold.outputs["next"] == "dispatch":
        waves.append(wave(gh, "loop"))
        assert len(waves) < 6
    assert [[e["node"] for e in w.matrix["include"]] for w in waves] == [
        ["impl"], ["review"], ["impl"], ["review"]
    ]  # fmt: skip
    last = waves[-1].fold
    assert last.outputs["status"] == "paused" and last.outputs["gate"] == "review.exhausted"
    state = gh.run_state("loop")
    assert state["paused_at"] == "review.exhausted"
    [paused] = [e for e in gh.run_events("loop") if e["event"] == "gate_paused"]
    assert "fix the thing" in paused["description"]  # the findings the job handed back
