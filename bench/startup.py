"""Start-up: cold `omg --help`, `omg lint` on a small graph and on generated 500 / 2,000 /
10,000-node graphs, and `omg status` — each a fresh process, as a pre-commit hook or CI pays it.

    python bench/startup.py [--quick] [--repeats 7]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from common import OMG, chain, median_of, report, wall

ROOT = Path(__file__).resolve().parents[1]


def wide_graph(n: int) -> str:
    """``n`` nodes in chains of 10 with a feedback arc each: what lint's rules must walk."""
    lines = [f"name: g{n}", "nodes:"]
    for i in range(n):
        lines.append(f"  - id: n{i}")
        if i % 10:
            lines.append(f"    depends_on: [n{i - 1}]")
        lines.append("    run: 'true'")
        if i % 10 == 9:
            lines.append(f"    feedback: {{rerun: n{i - 9}, max: 2}}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: small graphs, one repeat")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    sizes = [50] if args.quick else [500, 2000, 10000]
    work = Path(tempfile.mkdtemp(prefix="omg-startup-"))
    try:
        for n in sizes:
            (work / f"g{n}.yaml").write_text(wide_graph(n))
        (work / "run.yaml").write_text(chain(20))
        wall([*OMG, "run", "run.yaml", "--no-commit", "--run-id", "r"], work)
        small = str(ROOT / "graphs" / "review-loop.yaml")
        cases = [
            ("python floor (-c pass)", [sys.executable, "-c", "pass"]),
            ("omg --help", [*OMG, "--help"]),
            ("omg lint small", [*OMG, "lint", small]),
            ("python -m omg.lint small", [sys.executable, "-m", "omg.lint", small]),
            *((f"omg lint {n} nodes", [*OMG, "lint", f"g{n}.yaml"]) for n in sizes),
            ("omg status", [*OMG, "status"]),
            ("omg status RUN", [*OMG, "status", "r"]),
        ]
        rows, data = [], {}
        for name, argv in cases:
            ms = median_of(lambda argv=argv: wall(argv, work, check=False), repeats) * 1000
            rows.append([name, f"{ms:.0f}"])
            data[name] = round(ms, 1)
        report("startup", f"cold start, median of {repeats} (ms)", ["command", "ms"], rows, data)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
