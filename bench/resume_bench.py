"""How fast `omg resume` starts on a big run: 500 nodes, ~10,000 events, one trivial node left.

    python bench/resume_bench.py [--repeats 5] [--dir /dev/shm] [--nodes 500]

Builds the run once with the real engine, in-process: a 500-node DAG whose nodes each pass
after ten retries and whose twenty feedback loops each go four rounds, driven by a scripted
spawner (no processes), so the event stream holds ~10,000 real events over five legs. The
run pauses at a gate in front of one last node. Then, on a fresh copy each time,
`omg resume <run> --approve gate` runs as a subprocess and the bench records

  * time to first node — from spawning `omg resume` to the last node's command starting
    (it writes the clock), i.e. the new leg's first node_started; and
  * whole resume — the same subprocess to its exit (the one node run, the leg closed).

Medians of --repeats are printed, with what the process floor is (`omg --help`) and, in
process, what resume's load costs — every line of events.jsonl verified and folded in one
pass, state.json compared with the fold at its seq — against an unchecked read and fold of the
same history. The check must stay one streaming pass: exit 1 if it costs more than 1.5x that.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from omg.runners.process import ProcResult, SpawnRequest
from omg.schedule import LegResult

LOOP_EVERY = 25  # a feedback loop closes every LOOP_EVERY nodes
BODY = 5  # nodes in each loop body (target … declarer)
ROUNDS = 4  # rounds each loop goes before its declarer passes
RETRIES = 10  # failed attempts of every other node before it passes
LEGS = 5


def graph_text(n: int) -> str:
    """n nodes: a chain with skip edges, loops every LOOP_EVERY nodes, then a gate and `last`."""
    lines = ["name: resume-bench", "concurrency: 4", "max_hops: 1000", "nodes:"]
    for i in range(n - 1):
        deps = [f"n{i - 1:03d}"] if i else []
        j = i - 10  # skip edges, never into a loop body nor out of one but from its declarer
        if (
            j >= 0
            and i % LOOP_EVERY < LOOP_EVERY - BODY
            and (j % LOOP_EVERY < LOOP_EVERY - BODY or j % LOOP_EVERY == LOOP_EVERY - 1)
        ):
            deps.append(f"n{j:03d}")
        lines += [f"  - id: n{i:03d}", f"    run: echo n{i:03d}"]
        if deps:
            lines.append(f"    depends_on: [{', '.join(deps)}]")
        if i % LOOP_EVERY == LOOP_EVERY - 1:
            lines.append(f"    feedback: {{rerun: n{i - BODY + 1:03d}, max: {ROUNDS}}}")
        else:
            lines.append(f"    retry: {{max: {RETRIES}, on: [nonzero_exit]}}")
    lines += [
        "  - id: gate",
        "    type: gate",
        f"    depends_on: [n{n - 2:03d}]",
        "  - id: last",
        "    depends_on: [gate]",
        "    run: python3 -c 'import time; print(repr(time.time()))' > first-node.txt",
    ]
    return "\n".join(lines) + "\n"


class ScriptedSpawner:
    """Stands in for processes: a declarer fails its first ROUNDS executions, every other node
    fails RETRIES attempts of each execution, then passes."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, req: SpawnRequest) -> ProcResult:
        # stdin, the idle watchdog, reaping: nothing runs, so nothing to do
        argv = req.argv
        nid = argv[-1].split()[-1]
        k = self.calls.get(nid, 0)
        self.calls[nid] = k + 1
        if int(nid[1:]) % LOOP_EVERY == LOOP_EVERY - 1:
            fail = k < ROUNDS
        else:
            fail = k % (RETRIES + 1) != RETRIES
        return ProcResult(tuple(argv), 1 if fail else 0, f"{nid} attempt {k}\n", "", 0.001)


@contextlib.contextmanager
def no_fsync() -> Iterator[None]:
    """Building the fixture run only: skip fsync (the run's content is what matters here)."""
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def build(work: Path, n: int) -> Path:
    from omg.graph.load import load_graph
    from omg.leg.loop import LegOptions
    from omg.leg.start import Environment, resume_run, start_run

    graph_path = work / "g.yaml"
    graph_path.write_text(graph_text(n))
    graph = load_graph(graph_path)
    env = Environment(runs_dir=work / "runs", root=work, spawn=ScriptedSpawner())
    per_leg = len(graph.nodes) * 2 // LEGS
    with no_fsync(), contextlib.chdir(work):
        first = start_run(
            graph, Path("g.yaml"), {}, env, LegOptions(4, max_nodes=per_leg), run_id="big"
        )
        result: LegResult | None = first.result
        while result is not None and result.reason == "leg_budget":
            result = resume_run("big", env, LegOptions(4, max_nodes=per_leg)).result
    assert result is not None and result.paused_at == "gate", result
    return work / "runs" / "big"


def time_resume(work: Path, template: Path) -> tuple[float, float]:
    runs = work / "runs"
    shutil.rmtree(runs / "big", ignore_errors=True)
    shutil.copytree(template, runs / "big")
    stamp = work / "first-node.txt"
    stamp.unlink(missing_ok=True)
    argv = [
        sys.executable,
        "-m",
        "omg",
        "resume",
        "big",
        "--approve",
        "gate",
        "--by",
        "bench",
        "--no-commit",
        "--runs-dir",
        str(runs),
    ]
    t0 = time.time()
    p0 = time.perf_counter()
    res = subprocess.run(argv, cwd=work, capture_output=True, text=True)
    whole = time.perf_counter() - p0
    if res.returncode != 0:
        sys.exit(f"resume failed ({res.returncode}):\n{res.stderr}")
    first = float(stamp.read_text()) - t0
    return first, whole


def floor_s(work: Path) -> float:
    p0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "omg", "--help"], cwd=work, capture_output=True)
    return time.perf_counter() - p0


def in_process(rundir_path: Path) -> tuple[float, float, int, float]:
    """(verified load_run s, plain read+fold s, events, rebuilding the graph from the snapshot s).

    load_run checks every line and folds it in one pass, and compares state.json with the fold
    at its seq; the plain read+fold is what a replay without any check would cost."""
    from omg.graph.load import graph_from_snapshot
    from omg.state import fold
    from omg.state.store import RunDir, load_run

    rd = RunDir(rundir_path)
    p0 = time.perf_counter()
    state, last = load_run(rd)
    load = time.perf_counter() - p0
    p0 = time.perf_counter()
    fold(rd.read_events())
    full = time.perf_counter() - p0
    graph_from_snapshot(state["graph"], state["graph_source"])  # warm: imports, compiled schema
    p0 = time.perf_counter()
    graph_from_snapshot(state["graph"], state["graph_source"])
    graph = time.perf_counter() - p0
    return load, full, last, graph


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--dir", type=Path, default=None, help="where to work (default: $TMPDIR)")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="omg-resume-bench-", dir=args.dir))
    try:
        t0 = time.perf_counter()
        template = build(work, args.nodes)
        built = time.perf_counter() - t0
        log = [template / "events.jsonl", *sorted((template / "events").glob("*.jsonl"))]
        n_events = sum(p.read_bytes().count(b"\n") for p in log if p.exists())
        size = sum(p.stat().st_size for p in log if p.exists())
        print(
            f"built run: {args.nodes} nodes, {n_events} events ({size / 1e6:.1f} MB), "
            f"state.json {(template / 'state.json').stat().st_size / 1e3:.0f} kB "
            f"in {built:.1f} s"
        )

        keep = work / "template"
        shutil.copytree(template, keep)
        firsts, wholes, floors = [], [], []
        for _ in range(args.repeats):
            floors.append(floor_s(work))
            first, whole = time_resume(work, keep)
            firsts.append(first)
            wholes.append(whole)
        shutil.rmtree(work / "runs" / "big")
        shutil.copytree(keep, work / "runs" / "big")  # a run is read under its own name
        load, full, events, graph_s = in_process(work / "runs" / "big")
        med_first, med_whole = statistics.median(firsts), statistics.median(wholes)
        med_floor = statistics.median(floors)
        print(
            f"omg resume, time to first node  (median of {args.repeats}): "
            f"{med_first * 1000:.0f} ms   [{', '.join(f'{x * 1000:.0f}' for x in firsts)}]"
        )
        print(
            f"omg resume, whole leg           (median of {args.repeats}): "
            f"{med_whole * 1000:.0f} ms   [{', '.join(f'{x * 1000:.0f}' for x in wholes)}]"
        )
        print(
            f"process floor (`omg --help`)    (median of {args.repeats}): {med_floor * 1000:.0f} ms"
        )
        print(
            f"in process: load_run (all {events} events verified, state.json compared) "
            f"{load * 1000:.1f} ms; an unchecked read and fold of them {full * 1000:.1f} ms; "
            f"rebuilding the {args.nodes}-node graph from the snapshot {graph_s * 1000:.1f} ms"
        )
        if load > full * 1.5:
            print("FAIL: verifying the record costs more than half again an unchecked replay")
            return 1
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
