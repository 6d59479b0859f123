"""Fan-out across machines, simulated the way GitHub runs `omg-fanout.yml`: a plan job, one
fresh clone per matrix entry (all started at once), and a fold job — wave by wave."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pygit2

from omg.state.fold import stable_view

from .kit import GRAPH_PATH, Job, Repo, Running

FANOUT = "omg-fanout.yml"
TWELVE = [f"t{i:02d}" for i in range(1, 13)]

WIDE = "name: wide\nconcurrency: 12\nnodes:\n" + "".join(
    f"  - {{id: {n}, run: 'echo {n} checked'}}\n" for n in TWELVE
) + f"  - {{id: report, depends_on: [{', '.join(TWELVE)}], run: 'echo all {len(TWELVE)}'}}\n"

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


def records(gh: Repo, rid: str) -> list[str]:
    repo = pygit2.Repository(str(gh.origin))
    return sorted(r for r in repo.references if r.startswith(f"refs/omg/fanout/{rid}/"))


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

    solo = gh.root / "solo"
    gh.checkout(solo, "refs/heads/main", None)
    done = subprocess.run(
        [sys.executable, "-m", "omg", "run", GRAPH_PATH, "--run-id", "wide", "--no-commit"],
        cwd=solo, capture_output=True, text=True, env={**os.environ, "GITHUB_ACTIONS": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    alone = json.loads((solo / ".omg/runs/wide/state.json").read_text())
    assert comparable(fanned) == comparable(alone)
    starts = [e["node_id"] for e in gh.run_events("wide") if e["event"] == "node_started"]
    assert sorted(starts) == sorted([*TWELVE, "report"])  # each node ran exactly once
