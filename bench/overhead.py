"""Engine overhead: N-node chains and N-wide fan-outs of `true` through `omg run`, against a bash
script running the same commands in the same run (the floor), on disk and on tmpfs, in three modes:
no git, a state commit per node, and a commit plus a push to a local bare repository.

    python bench/overhead.py [--quick] [--repeats 5] [--sizes 300,1000,3000]
                             [--modes nogit,git,push] [--no-fanout] [--no-tmpfs]
                             [--against CHECKOUT]

Each repeat runs a fresh `omg run` (start-up included) and then, right after it, a fresh bash
script starting the same number of `sh -c true` children: the two are interleaved, so a busy
neighbour on a shared machine slows both alike. Each figure is the median over the repeats of
omg's time, of bash's, of their ratio, and of "ms/node" (omg's time minus bash's, per node).
``--against CHECKOUT`` runs another tree's sources (``PYTHONPATH``) too, in the same repeat just
beside this tree's (which goes first alternates), each in a fresh run of its own: a row per
tree, "before" and "after".
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from common import CHILD_ENV, OMG, bash_floor, chain, fan_out, git_repo, report, tmpfs, wall

MODES = ("nogit", "git", "push")


def _bare(path: Path) -> None:
    git = shutil.which("git") or "git"
    subprocess.run([git, "init", "-q", "--bare", str(path)], check=True)


def _git_bytes(repo: Path) -> int:
    return sum(p.stat().st_size for p in (repo / ".git").rglob("*") if p.is_file())


def measure(
    where: Path, graph: str, nodes: int, repeats: int, *, mode: str,
    envs: dict[str, dict[str, str]] | None = None,
) -> dict[str, dict[str, float]]:  # fmt: skip
    """Per tree (``envs``: label → environment), medians of omg's seconds, bash's seconds, their
    ratio and ms/node, interleaved per repeat (every tree's run, then bash's)."""
    envs = envs or {"": CHILD_ENV}
    work = Path(tempfile.mkdtemp(prefix="omg-overhead-", dir=where))
    try:
        if mode != "nogit":
            git_repo(work)
        if mode == "push":
            _bare(work / "origin.git")
            git = shutil.which("git") or "git"
            subprocess.run([git, "-C", str(work), "remote", "add", "origin", "origin.git"],
                           check=True)  # fmt: skip
        (work / "g.yaml").write_text(graph)
        got: dict[str, dict[str, list[float]]] = {label: {} for label in envs}
        for i in range(repeats):
            took: dict[str, float] = {}
            order = list(enumerate(envs.items()))
            for t, (label, env) in order[::-1] if i % 2 else order:  # who goes first alternates
                argv = [*OMG, "run", "g.yaml", "--run-id", f"r{i}-{t}"]
                if mode == "nogit":
                    argv.append("--no-commit")
                elif mode == "push":
                    argv += ["--push", "origin"]
                before = _git_bytes(work) if mode != "nogit" else 0
                took[label] = wall(argv, work, env=env)
                if mode != "nogit":
                    got[label].setdefault("growth", []).append(_git_bytes(work) - before)
            f = bash_floor(nodes, work)
            for label, o in took.items():
                for key, value in (("omg", o), ("bash", f), ("ratio", o / f),
                                   ("per_node", (o - f) / nodes * 1000)):  # fmt: skip
                    got[label].setdefault(key, []).append(value)
        med = statistics.median
        out: dict[str, dict[str, float]] = {}
        for label, m in got.items():
            out[label] = {
                "omg_s": med(m["omg"]),
                "bash_s": med(m["bash"]),
                "ratio": med(m["ratio"]),
                "overhead_ms_per_node": med(m["per_node"]),
            }
            if "growth" in m:
                out[label]["git_growth_mb"] = med(m["growth"]) / 1e6
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: tiny sizes, one repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", default="300,1000,3000")
    ap.add_argument("--modes", default=",".join(MODES), help="nogit, git (commit per node), push")
    ap.add_argument("--no-fanout", action="store_true", help="chains only")
    ap.add_argument("--no-tmpfs", action="store_true", help="disk only")
    ap.add_argument("--against", type=Path, help="another checkout's sources, run in turn")
    args = ap.parse_args()
    envs = {"": CHILD_ENV}
    if args.against is not None:
        envs = {"before ": {**CHILD_ENV, "PYTHONPATH": str(args.against.resolve())},
                "after ": CHILD_ENV}  # fmt: skip
    sizes = [10] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeats = 1 if args.quick else args.repeats
    modes = [m for m in args.modes.split(",") if m]
    if bad := [m for m in modes if m not in MODES]:
        raise SystemExit(f"--modes: unknown {bad}; choose from {', '.join(MODES)}")
    places = [("disk", Path(tempfile.gettempdir()))]
    if not args.no_tmpfs and (shm := tmpfs()) is not None:
        places.append(("tmpfs", shm))
    cases: list[tuple[str, str, int, str]] = []
    for mode in modes:
        for n in sizes:
            cases.append((f"chain {n}", chain(n), n, mode))
    if not args.no_fanout and "nogit" in modes:
        for n in sizes[:2]:
            for c in (1, 16):
                cases.append((f"fan-out {n} @{c}", fan_out(n, c), n + 1, "nogit"))
    rows, data = [], []
    for place, where in places:
        for name, graph, nodes, mode in cases:
            if place == "tmpfs" and mode != "nogit":
                continue
            for label, m in measure(where, graph, nodes, repeats, mode=mode, envs=envs).items():
                growth = f"{m['git_growth_mb']:.1f}" if "git_growth_mb" in m else "-"
                per_node = f"{m['overhead_ms_per_node']:.2f}"
                rows.append([place, mode, label + name, f"{m['omg_s']:.3f}", f"{m['bash_s']:.3f}",
                             f"{m['ratio']:.2f}x", per_node, growth])  # fmt: skip
                data.append({"where": place, "mode": mode, "case": label + name, "nodes": nodes,
                             **{k: round(v, 4) for k, v in m.items()}})  # fmt: skip
                print("  ".join(str(c) for c in rows[-1]), flush=True)
    header = ["where", "mode", "case", "omg s", "bash s", "ratio", "ms/node", ".git MB"]
    report("overhead", f"omg run vs bash, interleaved, median of {repeats}", header, rows, data)


if __name__ == "__main__":
    main()
