"""What the two-job hand-off costs: the artifact's size (its pack and manifest) and the time
bundle (run job), verify and apply (publish job) take, for the demo graph and a 300-node run.

    python bench/handoff.py [--nodes 300] [--dir /dev/shm] [--quick]

Each graph runs once, committing to its run branch in a clone of a bare remote (no push: the
run job's side); the publish job's side is a fresh clone of that remote, which verifies the
bundle and pushes it there.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2
from common import CHILD_ENV, chain, report

from omg.ci.handoff import Canaries, Expected, Plan, apply, bundle, nothing, verify

ROOT = Path(__file__).resolve().parents[1]
WHO = {f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER")
       for k, v in (("NAME", "bench"), ("EMAIL", "bench@localhost"))}  # fmt: skip


def one(where: Path, name: str, graph: str | None) -> dict[str, float | int | str]:
    """``graph`` (None: the demo, with the fragments it uses) run once and handed off."""
    origin = where / f"{name}.git"
    seed = pygit2.init_repository(str(where / f"{name}-seed"), initial_head="main")
    top = Path(seed.workdir)
    if graph is None:
        shutil.copytree(ROOT / "graphs", top / "graphs")
        seed.index.add_all(["graphs"])
    else:
        (top / "graphs").mkdir()
        (top / "graphs" / "demo.yaml").write_text(graph)
        seed.index.add("graphs/demo.yaml")
    seed.index.write()
    sig = pygit2.Signature("bench", "bench@localhost")
    main = str(seed.create_commit("HEAD", sig, sig, "init", seed.index.write_tree(), []))
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    seed.remotes.create("origin", str(origin)).push(["refs/heads/main:refs/heads/main"])
    run = where / f"{name}-run"
    pygit2.clone_repository(str(origin), str(run))
    argv = [sys.executable, "-m", "omg", "run", "graphs/demo.yaml", "--run-id", name]
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=run, capture_output=True, text=True, env={**CHILD_ENV, **WHO})
    leg = time.perf_counter() - t0
    if done.returncode not in (0, 1, 4):
        raise SystemExit(f"omg run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    graph_name = "demo" if graph is None else name
    plan = Plan(name, graph_name, 1, {}, (main,))
    art = where / f"{name}-artifact"
    t0 = time.perf_counter()
    manifest = bundle(run, art, plan, nothing())
    t_bundle = time.perf_counter() - t0
    pub = where / f"{name}-pub"
    pygit2.clone_repository(str(origin), str(pub))
    canaries = Canaries.of(["sk-bench-canary-0123456789"])
    expected = Expected(name, graph_name, {}, (main,), canaries=canaries)
    t0 = time.perf_counter()
    outcome = verify(art, pub, expected)
    t_verify = time.perf_counter() - t0
    if not hasattr(outcome, "moves"):
        raise SystemExit(f"the clean bundle was refused: {outcome}")
    t0 = time.perf_counter()
    apply(outcome, "origin")  # type: ignore[arg-type]
    t_apply = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in art.iterdir())
    return {
        "graph": name, "leg_s": round(leg, 2), "refs": len(manifest["refs"]),
        "objects": manifest["pack"]["objects"], "artifact_bytes": size,
        "bundle_s": round(t_bundle, 3), "verify_s": round(t_verify, 3),
        "apply_s": round(t_apply, 3),
    }  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--quick", action="store_true", help="a 5-node chain (the CI smoke)")
    args = ap.parse_args()
    if args.quick:
        args.nodes = 5
    where = Path(tempfile.mkdtemp(prefix="omg-bench-handoff-", dir=args.dir))
    try:
        rows = [
            one(where, "demo", None),
            one(where, f"chain{args.nodes}", chain(args.nodes, name=f"chain{args.nodes}")),
        ]
    finally:
        shutil.rmtree(where, ignore_errors=True)
    header = list(rows[0])
    report("handoff", "the hand-off: artifact size and time", header,
           [[str(r[h]) for h in header] for r in rows], rows)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
