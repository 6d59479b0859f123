"""The cost of a fan-out wave's two bookkeeping jobs, plan and fold, at 12 and 200 matrix
entries, in the workflow simulation of tests/actions (each job a fresh depth-1 clone of an
origin served over smart HTTP): the wall time of `omg plan --matrix` (starting the run, then
planning it again), of one matrix job (`omg leg --node`, median), and of `omg leg --fold`
(fetch the records, merge, commit, push, delete the records); and the pure parts alone
(`matrix.plan`; `merge_wave` plus the state fold) in process.

    python bench/fanout.py [--quick] [--sizes 12,200] [--parallel 4]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).parent))

from actions.kit import GRAPH_PATH, Job, Repo  # noqa: E402
from actions.kit import TOKEN as GIT_TOKEN  # noqa: E402
from actions.stand_in import StandIn  # noqa: E402
from common import report  # noqa: E402
from githttp import serving  # noqa: E402

from omg.graph.build import graph_from_data  # noqa: E402
from omg.matrix import plan  # noqa: E402
from omg.state.fold import fold  # noqa: E402
from omg.state.wave import merge_wave  # noqa: E402

FANOUT = "omg-fanout.yml"


def graph(n: int) -> str:
    lines = ["name: wide", f"concurrency: {n}", "nodes:"]
    lines += [f"  - {{id: t{i:03d}, run: 'echo {i}'}}" for i in range(n)]
    return "\n".join(lines) + "\n"


def job(gh: Repo, command: tuple[str, ...], extra: dict[str, str]) -> Job:
    done = gh.job(
        "workflow_dispatch",
        gh.dispatch_event({"run-id": "wide"}),
        command=command,
        workflow=FANOUT,
        extra={"OMG_RUN_ID": "wide", **extra},
    )
    assert isinstance(done, Job)
    if done.rc not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {done.rc}:\n{done.stderr[-2000:]}")
    return done


def one_wave(work: Path, n: int, parallel: int) -> dict[str, Any]:
    api = StandIn(permissions={"Codertocat": "admin"})
    server = api.start()
    try:
        with serving(work / "github", GIT_TOKEN) as git:
            gh = Repo(work, api, graph(n), git)
            plan_argv = ("plan", "wide", "--matrix", "--fetch", "origin", "--start", GRAPH_PATH)
            started = job(gh, plan_argv, {})
            again = job(gh, plan_argv, {})
            entries = [e["node"] for e in json.loads(again.outputs["matrix"])["include"]]
            assert len(entries) == n, again.stderr
            base = again.outputs["base"]

            def node(entry: str) -> float:
                return job(gh, ("leg",), {"OMG_NODE": entry, "OMG_BASE": base}).seconds

            with ThreadPoolExecutor(parallel) as pool:
                node_s = list(pool.map(node, entries))
            published = {
                entry: [json.loads(ln) for ln in records(gh, entry).splitlines()]
                for entry in entries
            }
            folded = job(gh, ("leg",), {"OMG_FOLD": "true", "OMG_BASE": base})
            assert folded.outputs.get("status") == "passed", folded.stderr
            pure = pure_parts(gh, n, published, entries)
            return {
                "plan_start_s": started.seconds,
                "plan_s": again.seconds,
                "node_job_s": statistics.median(node_s),
                "fold_s": folded.seconds,
                **pure,
            }
    finally:
        server.shutdown()


def records(gh: Repo, entry: str) -> str:
    import pygit2

    repo = pygit2.Repository(str(gh.origin))
    commit = repo.revparse_single(f"refs/omg/fanout/wide/{entry}").peel(pygit2.Commit)
    return str(commit.tree["events.jsonl"].data.decode())


def pure_parts(
    gh: Repo, n: int, published: dict[str, list[dict[str, Any]]], order: list[str]
) -> dict[str, float]:
    import yaml

    g = graph_from_data(yaml.safe_load(graph(n)))
    t0 = time.perf_counter()
    for _ in range(20):
        plan(g, {})
    plan_ms = (time.perf_counter() - t0) / 20 * 1000
    base = [e for e in next(iter(published.values())) if e["leg"] == 1]
    state = fold(base)
    t0 = time.perf_counter()
    merged = merge_wave(state["seq"] + 1, 2, published, order)
    fold(merged, state)
    merge_ms = (time.perf_counter() - t0) * 1000
    return {"pure_plan_ms": plan_ms, "pure_merge_fold_ms": merge_ms}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small wave (4 entries)")
    ap.add_argument("--sizes", default="12,200", help="entries per wave, comma-separated")
    ap.add_argument("--parallel", type=int, default=4, help="matrix jobs started at once")
    args = ap.parse_args()
    sizes = [4] if args.quick else [int(s) for s in args.sizes.split(",")]
    rows, results = [], []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            got = one_wave(Path(tmp), n, args.parallel)
        results.append({"entries": n, **{k: round(v, 4) for k, v in got.items()}})
        rows.append(
            [
                n,
                f"{got['plan_start_s'] * 1000:.0f} ms",
                f"{got['plan_s'] * 1000:.0f} ms",
                f"{got['node_job_s'] * 1000:.0f} ms",
                f"{got['fold_s'] * 1000:.0f} ms",
                f"{got['pure_plan_ms']:.2f} ms",
                f"{got['pure_merge_fold_ms']:.1f} ms",
            ]
        )
    header = [
        "entries",
        "plan (starts run)",
        "plan",
        "matrix job (median)",
        "fold",
        "matrix.plan",
        "merge+fold",
    ]
    title = f"one fan-out wave, each job a fresh clone ({args.parallel} matrix jobs at a time)"
    report("fanout", title, header, rows, results)


if __name__ == "__main__":
    main()
