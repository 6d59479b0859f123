"""Engine overhead: N-node chains and N-wide fan-outs of `true` through `omg run`, against a bash
script running the same commands in the same run (the floor), on disk and on tmpfs, without git
and with a state commit per node.

    python bench/overhead.py [--quick] [--repeats 3] [--sizes 100,300,1000]

Each figure is the median wall time of a fresh `omg run` (start-up included) and of a fresh
bash script starting the same number of `sh -c true` children. "ms/node" is omg's time minus
the floor's, per node.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from common import OMG, bash_floor, chain, fan_out, git_repo, median_of, report, tmpfs, wall


def measure(where: Path, graph: str, nodes: int, repeats: int, *, git: bool) -> tuple[float, float]:
    """(omg median s, bash median s) for one graph in a fresh directory under ``where``."""
    work = Path(tempfile.mkdtemp(prefix="omg-overhead-", dir=where))
    try:
        if git:
            git_repo(work)
        (work / "g.yaml").write_text(graph)
        runs = iter(range(1000))

        def omg() -> float:
            argv = [*OMG, "run", "g.yaml", "--run-id", f"r{next(runs)}"]
            return wall(argv if git else [*argv, "--no-commit"], work)

        def floor() -> float:
            return bash_floor(nodes, work)

        return median_of(omg, repeats), median_of(floor, repeats)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: tiny sizes, one repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="100,300,1000")
    args = ap.parse_args()
    sizes = [10] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    places = [("disk", Path(tempfile.gettempdir()))]
    if (shm := tmpfs()) is not None:
        places.append(("tmpfs", shm))
    cases: list[tuple[str, str, int, bool]] = []
    for n in sizes:
        cases.append((f"chain {n}", chain(n), n, False))
        for c in (1, 4, 16):
            cases.append((f"fan-out {n} @{c}", fan_out(n, c), n + 1, False))
    for n in sizes[:2]:
        cases.append((f"chain {n} + git", chain(n), n, True))
    rows, data = [], []
    for place, where in places:
        for name, graph, nodes, git in cases:
            if place == "tmpfs" and git:
                continue
            omg_s, floor_s = measure(where, graph, nodes, repeats, git=git)
            per_node = (omg_s - floor_s) / nodes * 1000
            rows.append([place, name, f"{omg_s:.3f}", f"{floor_s:.3f}", f"{omg_s / floor_s:.2f}x",
                         f"{per_node:.2f}"])  # fmt: skip
            data.append({"where": place, "case": name, "nodes": nodes, "omg_s": round(omg_s, 4),
                         "bash_s": round(floor_s, 4), "ratio": round(omg_s / floor_s, 3),
                         "overhead_ms_per_node": round(per_node, 3)})  # fmt: skip
    header = ["where", "case", "omg s", "bash s", "ratio", "ms/node"]
    report("overhead", f"omg run vs bash, median of {repeats}", header, rows, data)


if __name__ == "__main__":
    main()
