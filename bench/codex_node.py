"""One codex node's start-up cost, the codex CLI's share against omg's, and the rehearsal of
graphs/cross-model.yaml (codex implements, claude reviews) leg by leg. Everything runs the
pinned CLIs (`npm ci`) against the scripted stand-in on loopback: no network, nothing spent.

  1. the CLI alone: `codex exec --json …` answering one text turn, prompt on stdin, exactly
     as omg starts it (omg's provider flags, a fresh CODEX_HOME each time);
  2. omg around it: `omg run` of a one-codex-node graph with --rehearse — the wall time, the
     node's own recorded duration (the CLI's process) and the difference (omg's share);
  3. the cross-model graph rehearsed with --max-nodes 2: each leg's nodes, outcome, wall time.

    python bench/codex_node.py [--quick] [--repeats R]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from common import CHILD_ENV, OMG, git_repo, report  # noqa: E402

from omg.graph.build import node_from_data  # noqa: E402
from omg.runners.base import Invocation  # noqa: E402
from omg.runners.codex import CodexRunner  # noqa: E402
from omg.runners.registry import rehearsal_env  # noqa: E402
from omg.runners.room import Rooms  # noqa: E402
from omg.stubmodel import StubModel  # noqa: E402
from omg.stubmodel.script import build  # noqa: E402

CODEX = ROOT / "node_modules" / ".bin" / "codex"
CLAUDE = ROOT / "node_modules" / ".bin" / "claude"
ONE = "name: one\nnodes:\n  - {id: a, runtime: codex, prompt: say DONE}\n"
SCRIPT = "rules:\n  - name: done\n    reply: DONE\n"
TASK = "task=add hello.sh printing 'hello, world'"


def cli_alone(work: Path, repeats: int) -> list[float]:
    stub = StubModel(build({"rules": [{"name": "done", "reply": "DONE"}]}, "bench"))
    took = []
    node = node_from_data({"id": "a", "runtime": "codex", "prompt": "say DONE"})
    with stub.serve():
        runner = CodexRunner(binary=str(CODEX))
        for _ in range(repeats):
            with Rooms(work / "rooms").room() as room:  # a codex home of its own
                env = room.env(runner.furnish(room, rehearsal_env(CHILD_ENV, stub.url)))
                inv = Invocation(node=node, text="say DONE", cwd=work, env=env, timeout_s=60)
                argv = runner.argv(inv)
                t0 = time.perf_counter()
                res = subprocess.run(
                    argv, input="say DONE", cwd=work, env=env, capture_output=True, text=True
                )
                took.append(time.perf_counter() - t0)
            if '"text":"DONE"' not in res.stdout:
                raise SystemExit(f"codex did not answer:\n{res.stdout[-800:]}{res.stderr[-800:]}")
    return took


def omg_run(work: Path, repeats: int) -> list[tuple[float, float]]:
    (work / "one.yaml").write_text(ONE)
    (work / "s.yaml").write_text(SCRIPT)
    env = {**CHILD_ENV, "OMG_CODEX_BIN": str(CODEX)}
    out = []
    for i in range(repeats):
        t0 = time.perf_counter()
        res = subprocess.run(
            [*OMG, "run", "one.yaml", "--run-id", f"r{i}", "--rehearse", "s.yaml"],
            cwd=work, env=env, capture_output=True, text=True,
        )  # fmt: skip
        total = time.perf_counter() - t0
        if res.returncode != 0:
            raise SystemExit(f"omg run failed:\n{res.stdout[-1500:]}{res.stderr[-1500:]}")
        state = json.loads((work / ".omg" / "runs" / f"r{i}" / "state.json").read_text())
        out.append((total, float(state["nodes"]["a"]["duration_s"])))
    return out


def cross_model_legs(work: Path, most: int) -> list[dict[str, Any]]:
    env = {**CHILD_ENV, "OMG_CODEX_BIN": str(CODEX), "OMG_CLAUDE_BIN": str(CLAUDE)}
    graph = ROOT / "graphs" / "cross-model.yaml"
    script = ROOT / "graphs" / "rehearsals" / "cross-model.yaml"
    run = work / ".omg" / "runs" / "xm"
    legs: list[dict[str, Any]] = []
    argv = [*OMG, "run", str(graph), "-i", TASK, "--run-id", "xm"]
    while len(legs) < most:
        seen = len(run.joinpath("events.jsonl").read_text().splitlines()) if run.exists() else 0
        t0 = time.perf_counter()
        res = subprocess.run(
            [*argv, "--rehearse", str(script), "--max-nodes", "2"],
            cwd=work, env=env, capture_output=True, text=True,
        )  # fmt: skip
        took = time.perf_counter() - t0
        events = [json.loads(x) for x in run.joinpath("events.jsonl").read_text().splitlines()]
        ran = [
            f"{e['node_id']}{'↻' if e['event'] == 'node_retried' else ''}"
            for e in events[seen:]
            if e["event"] in ("node_passed", "node_failed", "node_retried")
        ]
        state = json.loads(run.joinpath("state.json").read_text())
        legs.append({"leg": len(legs) + 1, "nodes": ran, "exit": res.returncode,
                     "status": state["status"], "wall_s": round(took, 2)})  # fmt: skip
        if res.returncode != 4:
            break
        argv = [*OMG, "resume", "xm"]
    return legs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one repeat, the first leg (a smoke)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    for cli in (CODEX, CLAUDE):
        if not cli.exists():
            raise SystemExit(f"{cli} is missing: run `npm ci` in the checkout")
    work = Path(tempfile.mkdtemp(prefix="omg-codex-bench-"))
    try:
        git_repo(work / "repo")
        cli = cli_alone(work, repeats)
        runs = omg_run(work / "repo", repeats)
        legs = cross_model_legs(work / "repo", 1 if args.quick else 10)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    total, node = med(t for t, _ in runs), med(d for _, d in runs)
    rows = [
        ("codex exec alone (one text turn)", f"{med(cli):.2f} s", f"min {min(cli):.2f} s"),
        ("omg run, one codex node", f"{total:.2f} s", f"min {min(t for t, _ in runs):.2f} s"),
        ("  of which the node (CLI process)", f"{node:.2f} s", ""),
        ("  of which omg", f"{total - node:.2f} s", f"{100 * (total - node) / total:.0f} %"),
    ]
    rows += [
        (f"cross-model leg {g['leg']}: {' '.join(g['nodes'])}",
         f"{g['wall_s']:.2f} s", f"exit {g['exit']}, {g['status']}")
        for g in legs
    ]  # fmt: skip
    data = {
        "cli_alone_s": med(cli),
        "omg_run_s": total,
        "node_s": node,
        "omg_share_s": total - node,
        "cross_model_legs": legs,
        "repeats": repeats,
    }
    report("codex_node", f"One codex node ({repeats} repeat(s), median)", ("what", "time", ""),
           rows, data)  # fmt: skip


if __name__ == "__main__":
    main()
