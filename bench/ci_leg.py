"""omg's own part of a CI leg, in the workflow simulation of tests/actions: a PR opened (runs to
its gate) then an approval comment (runs to the end), each job in a fresh depth-1 clone of an
origin served over smart HTTP, with the REST stand-in answering. Reports, per job, the wall
time of `omg leg`, the time its nodes ran, omg's share and the pushes it made (every push to
origin: the run branch, its lease and notes); then where omg's share goes
(cProfile of the same jobs: restore the run branch, leg bookkeeping and commits, push,
summary, comment); and the action's install step (uv, uv bootstrapped by pip, pip).

    python bench/ci_leg.py [--quick] [--nodes N] [--repeats R] [--no-install]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).parent))

from actions.kit import TOKEN, Job, Repo  # noqa: E402
from actions.stand_in import StandIn  # noqa: E402
from common import machine  # noqa: E402
from githttp import serving  # noqa: E402

#: (label, the functions whose cumulative time makes it up)
PHASES = [
    ("restore the run branch (fetch + files)", ["fetch_run"]),
    ("run-branch commits (fold written, commit)", ["commit_run_dir"]),
    ("pushes", ["push"]),
    ("step summary", ["write_summary"]),
    ("PR comment (find + update/post)", ["upsert_comment", "post_once"]),
    ("nodes (child processes)", ["spawn"]),
    ("imports (every module, start-up)", ["_find_and_load"]),
    ("the run's record verified (load_run)", ["load_run"]),
    ("whole omg leg", ["main"]),
]


def graph(nodes: int) -> str:
    lines = ["name: pr", "nodes:", "  - {id: n0, run: 'true'}"]
    lines += [f"  - {{id: n{i}, depends_on: [n{i - 1}], run: 'true'}}" for i in range(1, nodes)]
    lines += [f"  - {{id: ok, type: gate, depends_on: [n{nodes - 1}]}}"]
    lines += ["  - {id: ship, depends_on: [ok], run: 'true'}"]
    return "\n".join(lines) + "\n"


def node_seconds(gh: Repo, rid: str, leg: int) -> float:
    return sum(
        float(e.get("duration_s") or 0)
        for e in gh.run_events(rid)
        if e["event"] in ("node_passed", "node_failed") and e["leg"] == leg
    )


def one_loop(work: Path, nodes: int, profile: Path | None) -> list[dict[str, Any]]:
    api = StandIn(permissions={"octocat": "write"})
    server = api.start()
    try:
        with serving(work / "github", TOKEN) as git:
            gh = Repo(work, api, graph(nodes), git)
            gh.push_pr(2, {"code.txt": "v1\n"})
            rows = []
            events = [
                ("pull_request", gh.pr_event("opened", 2)),
                ("issue_comment", None),
            ]
            for i, (name, event) in enumerate(events, start=1):
                if event is None:
                    event = gh.comment_event(2, "/omg approve ok", "octocat", "MEMBER")
                py: tuple[str, ...] = ()
                if profile is not None:
                    py = ("-m", "cProfile", "-o", str(profile / f"leg{i}.prof"))
                pushed = git.pushes()
                job = gh.job(name, event, python=py)
                assert isinstance(job, Job) and job.rc == 0, getattr(job, "stderr", job)
                pushed = git.pushes() - pushed
                took = job.seconds
                rid = job.outputs["run-id"]
                ran = node_seconds(gh, rid, i)
                rows.append(
                    {"job": name, "status": job.outputs["status"], "wall_s": took, "nodes_s": ran,
                     "pushes": pushed}
                )  # fmt: skip
            return rows
    finally:
        server.shutdown()


def phases(profile: Path) -> list[tuple[str, float]]:
    out = []
    stats = pstats.Stats(str(profile))
    table: dict[str, float] = {}
    for (_file, _line, name), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        table[name] = max(table.get(name, 0.0), ct)
    for label, names in PHASES:
        out.append((label, sum(table.get(n, 0.0) for n in names)))
    return out


def _base_env() -> dict[str, str]:
    """This machine's environment (its index and certificate settings) without uv or a venv."""
    keep = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_CACHE_DIR")}
    dirs = [d for d in keep.get("PATH", "").split(":") if d and not Path(d, "uv").exists()]
    keep["PATH"] = ":".join(dirs) or "/usr/bin:/bin"
    return keep


def install_times(quick: bool) -> list[tuple[str, float]]:
    """Cold installs (empty HOME, so no pip or uv cache) from a clean export of HEAD — what
    the action's checkout holds — not from this working tree and its .venv."""
    src = Path(tempfile.mkdtemp()) / "omg"
    src.mkdir()
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
    script = src / ".github" / "install-omg.sh"
    out = []
    uv = shutil.which("uv")
    cases = [("pip only (no uv)", {"OMG_NO_UV": "1"})]
    if not quick:
        cases.insert(0, ("uv bootstrapped with pip", {}))
    for label, extra in cases:
        with tempfile.TemporaryDirectory() as tmp:
            env = {**_base_env(), "HOME": tmp, **extra}
            t0 = time.perf_counter()
            subprocess.run(
                ["bash", str(script), sys.executable, f"{tmp}/venv", str(src)],
                env=env, check=True, capture_output=True,
            )  # fmt: skip
            out.append((label, time.perf_counter() - t0))
            if label == "uv bootstrapped with pip" and uv is None:
                uv = f"{tmp}/uv-bin/uv"
                Path(uv).parent.mkdir()
                shutil.copy(f"{tmp}/venv/bin/uv", uv)
                with tempfile.TemporaryDirectory() as tmp2:
                    base = _base_env()
                    env2 = {**base, "PATH": f"{Path(uv).parent}:{base['PATH']}", "HOME": tmp2}
                    t0 = time.perf_counter()
                    subprocess.run(
                        ["bash", str(script), sys.executable, f"{tmp2}/venv", str(src)],
                        env=env2, check=True, capture_output=True,
                    )  # fmt: skip
                    out.append(("uv on PATH", time.perf_counter() - t0))
                    t0 = time.perf_counter()  # what a cache hit costs: unpacking the venv
                    packed = subprocess.run(
                        ["tar", "-c", "-C", tmp2, "venv"], capture_output=True, check=True
                    ).stdout
                    with tempfile.TemporaryDirectory() as tmp3:
                        t0 = time.perf_counter()
                        subprocess.run(["tar", "-x", "-C", tmp3], input=packed, check=True)
                        out.append(("cache hit (unpack the venv)", time.perf_counter() - t0))
    shutil.rmtree(src.parent)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small loop, no install timings")
    ap.add_argument("--nodes", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-install", action="store_true", help="leave out the install timings")
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    nodes = 2 if args.quick else args.nodes
    loops = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            loops.append(one_loop(Path(tmp), nodes, None))
    print(f"simulated PR loop, {nodes} shell nodes + gate + 1, median of {repeats}")
    print(
        f"{'job':<15} {'status':<8} {'omg leg':>9} {'nodes':>8} {'omg share':>10} {'pushes':>7}"
    )
    results: dict[str, Any] = {"nodes": nodes, "jobs": []}
    for i in range(len(loops[0])):
        wall = statistics.median(loop[i]["wall_s"] for loop in loops)
        ran = statistics.median(loop[i]["nodes_s"] for loop in loops)
        pushes = max(loop[i]["pushes"] for loop in loops)
        row = loops[0][i]
        share = (wall - ran) * 1000
        print(
            f"{row['job']:<15} {row['status']:<8} {wall * 1000:>7.0f}ms {ran * 1000:>6.0f}ms "
            f"{share:>8.0f}ms {pushes:>7}"
        )
        results["jobs"].append(
            {"job": row["job"], "wall_ms": round(wall * 1000), "nodes_ms": round(ran * 1000),
             "pushes": pushes}
        )  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        prof = Path(tmp) / "prof"
        prof.mkdir()
        one_loop(Path(tmp), nodes, prof)
        for leg in (1, 2):
            print(f"\nwhere leg {leg}'s time goes (cProfile, cumulative; profiling slows it)")
            got = phases(prof / f"leg{leg}.prof")
            for label, secs in got:
                print(f"  {label:<45} {secs * 1000:>7.0f}ms")
            results[f"leg{leg}_phases_ms"] = {k: round(v * 1000) for k, v in got}
    if not args.quick and not args.no_install:
        print("\naction install step (.github/install-omg.sh, cold, no cache)")
        inst = install_times(args.quick)
        for label, secs in inst:
            print(f"  {label:<30} {secs:>6.1f}s")
        results["install_s"] = {k: round(v, 1) for k, v in inst}
    print(json.dumps({"bench": "ci_leg", "machine": machine(), "results": results}))


if __name__ == "__main__":
    main()
