"""Start-up: cold `omg --help`, `omg lint` on a small graph and on generated 500 / 2,000 /
10,000-node graphs, `omg status`, and `omg run` of the demo up to its first node (committed, and
`--no-commit`) — each a fresh process, as a pre-commit hook or CI pays it.

    python bench/startup.py [--quick] [--repeats 7] [--against CHECKOUT]

The first node is timed from the moment the process is started to the moment the demo's
`fetch` node touches its marker file (the file's modification time, on the same clock).
``--against CHECKOUT`` times another tree's sources (``PYTHONPATH``) too, each repeat running
this tree's process and then that one's, so a neighbour's load shifts both.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from common import CHILD_ENV, OMG, chain, git_repo, median_of, report, wall

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


def demo_repo(work: Path) -> Path:
    """A git repository holding the shipped graphs, as `omg run graphs/demo.yaml` expects."""
    repo = work / "demo"
    git_repo(repo)
    shutil.copytree(ROOT / "graphs", repo / "graphs")
    return repo


def first_node(repo: Path, extra: Sequence[str], env: dict[str, str]) -> float:
    """Seconds from starting `omg run graphs/demo.yaml` to its first node's first command."""
    marker = ".omg/**/demo/.fetch-attempted"
    before = set(repo.glob(marker))
    t0 = time.time()
    res = subprocess.run(
        [*OMG, "run", "graphs/demo.yaml", *extra], cwd=repo, capture_output=True, env=env
    )
    if res.returncode != 0:
        raise SystemExit(
            f"omg run graphs/demo.yaml exited {res.returncode}: {res.stderr[-2000:]!r}"
        )
    found = [p for p in repo.glob(".omg/**/demo/.fetch-attempted") if p not in before]
    if len(found) != 1:
        raise SystemExit(f"the demo's first node left {len(found)} markers, not one")
    return found[0].stat().st_mtime - t0


def interleaved(fns: Sequence[Callable[[], float]], repeats: int) -> list[float]:
    """Each fn's median over ``repeats`` rounds, the fns taking turns within each round."""
    runs: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            runs[i].append(fn())
    return [statistics.median(r) for r in runs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: small graphs, one repeat")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--against", type=Path, help="another checkout's sources, timed in turn")
    ap.add_argument("--only-run", action="store_true", help="--help and the first node only")
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    envs = {"": CHILD_ENV}
    if args.against is not None:
        there = str(args.against.resolve())
        envs["against "] = {**CHILD_ENV, "PYTHONPATH": there}
    sizes = [50] if args.quick else [500, 2000, 10000]
    work = Path(tempfile.mkdtemp(prefix="omg-startup-"))
    try:
        for n in sizes:
            (work / f"g{n}.yaml").write_text(wide_graph(n))
        (work / "run.yaml").write_text(chain(20))
        wall([*OMG, "run", "run.yaml", "--no-commit", "--run-id", "r"], work)
        small = str(ROOT / "graphs" / "review-loop.yaml")
        repo = demo_repo(work)
        fns: list[tuple[str, Callable[[], float]]] = []
        for tag, env in envs.items():
            fns.append((f"{tag}omg --help", lambda e=env: wall([*OMG, "--help"], work, env=e)))
            for extra in ((), ("--no-commit",)):
                name = f"{tag}omg run demo{' ' if extra else ''}{' '.join(extra)}: first node"
                fns.append((name, lambda x=extra, e=env: first_node(repo, x, e)))
        rows, data = [], {}
        for (name, _), took in zip(fns, interleaved([f for _, f in fns], repeats), strict=True):
            rows.append([name, f"{took * 1000:.0f}"])
            data[name] = round(took * 1000, 1)
        if args.only_run:
            report(
                "startup", f"cold start, median of {repeats} (ms)", ["command", "ms"], rows, data
            )
            return
        cases = [
            ("python floor (-c pass)", [sys.executable, "-c", "pass"]),
            ("omg lint small", [*OMG, "lint", small]),
            ("python -m omg.lint small", [sys.executable, "-m", "omg.lint", small]),
            *((f"omg lint {n} nodes", [*OMG, "lint", f"g{n}.yaml"]) for n in sizes),
            ("omg status", [*OMG, "status"]),
            ("omg status RUN", [*OMG, "status", "r"]),
        ]
        for name, argv in cases:
            ms = median_of(lambda argv=argv: wall(argv, work, check=False), repeats) * 1000
            rows.append([name, f"{ms:.0f}"])
            data[name] = round(ms, 1)
        report("startup", f"cold start, median of {repeats} (ms)", ["command", "ms"], rows, data)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
