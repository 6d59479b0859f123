"""Engine overhead: a chain of N `true` nodes through `omg run` against the same N commands in sh.

    python bench/engine_bench.py [--nodes 300] [--repeats 3] [--dir /dev/shm]

Both sides start every command as `sh -c 'true'`, one after the other, so the difference is
what omg adds per node: scheduling, the fsync'd event lines, the atomic state.json rewrite,
artifacts and progress — plus one Python start-up for the whole run. The run happens in a
temporary directory (under --dir, default $TMPDIR) outside any git repository, with
--no-commit; omg and sh alternate so a busy machine slows both alike. Prints the medians, the
ratio, the overhead per node and how much of it is the durability floor the run directory's
contract requires of every node (two fsync'd event lines, one fsync'd state.json rename),
measured on the same filesystem. Exit 0 when the targets hold (within 5x of sh, under 3 ms
per node), else 1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 5.0
TARGET_MS_PER_NODE = 3.0


def chain_graph(n: int) -> str:
    lines = ["name: bench-chain", "nodes:", "  - {id: n0, run: 'true'}"]
    lines += [f"  - {{id: n{i}, depends_on: [n{i - 1}], run: 'true'}}" for i in range(1, n)]
    return "\n".join(lines) + "\n"


def time_omg(work: Path, graph: Path, run_id: str) -> float:
    argv = [
        sys.executable,
        "-m",
        "omg",
        "run",
        str(graph),
        "--no-commit",
        "--runs-dir",
        str(work / "runs"),
        "--run-id",
        run_id,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"omg run failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall


def time_sh(script: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(["bash", str(script)], check=True)
    return time.perf_counter() - t0


def time_sync_floor(work: Path, n: int, state_bytes: int) -> float:
    """Seconds for n × (two fsync'd appends + one fsync'd temp-file rename of state_bytes)."""
    log = os.open(work / "floor.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    line = b"x" * 200 + b"\n"
    blob = b"y" * state_bytes
    t0 = time.perf_counter()
    try:
        for _ in range(n):
            for _ in range(2):
                os.write(log, line)
                os.fsync(log)
            tmp = work / "floor.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, blob)
            os.fsync(fd)
            os.close(fd)
            os.replace(tmp, work / "floor.json")
    finally:
        os.close(log)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where the temporary run directory goes")
    args = ap.parse_args()
    n = args.nodes

    with tempfile.TemporaryDirectory(prefix="omg-bench-", dir=args.dir) as tmp:
        work = Path(tmp)
        probe = subprocess.run(["git", "-C", str(work), "rev-parse"], capture_output=True)
        if probe.returncode == 0:
            raise SystemExit(f"{work} is inside a git repository; set TMPDIR elsewhere")
        graph = work / "chain.yaml"
        graph.write_text(chain_graph(n))
        script = work / "chain.sh"
        script.write_text("set -e\n" + "sh -c 'true'\n" * n)

        single = work / "single.yaml"
        single.write_text(chain_graph(1))
        omg_times, sh_times, floor_times, start_times = [], [], [], []
        for k in range(args.repeats):
            start_times.append(time_omg(work, single, f"single-{k}"))
            omg_times.append(time_omg(work, graph, f"bench-{k}"))
            sh_times.append(time_sh(script))
            size = (work / "runs" / f"bench-{k}" / "state.json").stat().st_size
            floor_times.append(time_sync_floor(work, n, size // 2))

    omg_s = statistics.median(omg_times)
    sh_s = statistics.median(sh_times)
    floor_ms = statistics.median(floor_times) / n * 1000
    start_s = statistics.median(start_times)
    start_ms = start_s / n * 1000
    ratio = omg_s / sh_s
    per_node_ms = (omg_s - sh_s) / n * 1000
    print(f"{n}-node chain of `true` in {Path(tmp).parent}, median of {args.repeats}:")
    print(f"  omg run   {omg_s:7.3f} s   ({', '.join(f'{t:.3f}' for t in omg_times)})")
    print(f"  sh        {sh_s:7.3f} s   ({', '.join(f'{t:.3f}' for t in sh_times)})")
    print(f"  ratio     {ratio:7.2f} x   (target < {TARGET_RATIO:g}x)")
    print(f"  overhead  {per_node_ms:7.2f} ms per node   (target < {TARGET_MS_PER_NODE:g} ms)")
    print(
        f"    of which durability floor {floor_ms:5.2f} ms per node "
        "(2 fsync'd event lines + 1 fsync'd state.json rename)"
    )
    print(
        f"    of which start-up         {start_ms:5.2f} ms per node "
        f"(a 1-node run takes {start_s:.3f} s: interpreter, imports, load, ledger)"
    )
    print(
        f"    the rest                  {per_node_ms - floor_ms - start_ms:5.2f} ms per node "
        "(scheduling, spawning from Python, events, state, artifacts)"
    )
    ok = ratio < TARGET_RATIO and per_node_ms < TARGET_MS_PER_NODE
    print("  OK" if ok else "  MISSED the target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
