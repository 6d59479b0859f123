"""`omg stats` over many runs: the wall time of a fresh `omg stats` process (text and JSON, and
with `--html`) on 1,000 runs' branches, and the in-process read and summary alone.
The target: 1,000 runs in under 5 s.

    python bench/stats.py [--quick] [--runs 1000] [--repeats 5]

The runs are the statistics tests' synthetic review loops (tests/stats/synth.py): each one's
events written as a leg writes them — rounds of a feedback loop, a gate a person decides, a
pull request, API retries, a limit pause — state.json their fold (a fifth of them behind their
log, which the reader catches up), committed as run branches in one pack, as a fetch leaves
them. About 10 events and 4 executions a run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from common import OMG, median_of, report, wall

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from stats.synth import make_runs  # noqa: E402

from omg.git.repo import open_repo  # noqa: E402
from omg.stats.intake import take  # noqa: E402
from omg.stats.summary import summarise  # noqa: E402


def in_process(repo: Path) -> tuple[float, float, int]:
    """Seconds to read every run branch, then to take them in and summarise; runs counted."""
    found = open_repo(repo)
    assert found is not None
    t0 = time.perf_counter()
    blobs = found.run_records()
    t1 = time.perf_counter()
    summary = summarise([take(b) for b in blobs])
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, summary.runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: 50 runs, one repeat")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    runs, repeats = (50, 1) if args.quick else (args.runs, args.repeats)
    work = Path(tempfile.mkdtemp(prefix="omg-stats-"))
    try:
        repo = work / "repo"
        made = time.perf_counter()
        make_runs(repo, runs)
        made = time.perf_counter() - made
        cases = {
            "omg stats": [*OMG, "stats"],
            "omg stats -f json": [*OMG, "stats", "--format", "json"],
            "omg stats --html": [*OMG, "stats", "--html", str(work / "stats.html")],
        }
        rows, data = [], {"runs": runs, "made_s": round(made, 2)}
        for name, argv in cases.items():
            took = median_of(lambda argv=argv: wall(argv, repo), repeats)
            rows.append([name, f"{took:.2f}", f"{took / runs * 1000:.2f}"])
            data[name] = round(took, 3)
        reads = [in_process(repo) for _ in range(repeats)]
        read = sorted(r[0] for r in reads)[len(reads) // 2]
        fold = sorted(r[1] for r in reads)[len(reads) // 2]
        assert all(r[2] == runs for r in reads)
        rows.append(["in process: read the branches", f"{read:.2f}", f"{read / runs * 1000:.2f}"])
        rows.append(["in process: take in, summarise", f"{fold:.2f}", f"{fold / runs * 1000:.2f}"])
        data.update(read_s=round(read, 3), summarise_s=round(fold, 3))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    title = f"omg stats on {runs} runs, median of {repeats} (fresh processes, start-up included)"
    report("stats", title, ["what", "seconds", "ms / run"], rows, data)


if __name__ == "__main__":
    main()
