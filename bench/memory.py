"""Memory: the max RSS of a leg whose node prints 200 MB, and of a leg of a 10,000-node graph —
bounded, not proportional to what nodes print.

    python bench/memory.py [--quick]

Each leg is a fresh `omg run` process; its max RSS is read with wait4(), which reports that
process alone (its children's own figures are not added in).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from common import CHILD_ENV, OMG, chain, report


def max_rss_mb(argv: list[str], cwd: Path) -> float:
    """The peak resident set of ``argv``'s process, in MiB."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 4):
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return usage.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: 20 MB and 500 nodes")
    args = ap.parse_args()
    mb = 20 if args.quick else 200
    nodes = 500 if args.quick else 10_000
    work = Path(tempfile.mkdtemp(prefix="omg-memory-"))
    try:
        loud = f"name: loud\nnodes:\n  - id: loud\n    run: head -c {mb * 1_000_000} /dev/zero\n"
        (work / "loud.yaml").write_text(loud)
        (work / "quiet.yaml").write_text("name: quiet\nnodes:\n  - {id: q, run: 'true'}\n")
        (work / "big.yaml").write_text(chain(nodes, "big"))
        run = [*OMG, "run", "--no-commit"]
        cases = [
            ("a leg of one quiet node", [*run, "quiet.yaml"]),
            (f"a node printing {mb} MB", [*run, "loud.yaml"]),
            (f"a {nodes}-node graph, leg of 50 nodes", [*run, "big.yaml", "--max-nodes", "50"]),
        ]
        rows, data = [], {}
        for name, argv in cases:
            rss = max_rss_mb(argv, work)
            rows.append([name, f"{rss:.1f}"])
            data[name] = round(rss, 1)
        report("memory", "max RSS of one leg (MiB)", ["leg", "max RSS MiB"], rows, data)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
