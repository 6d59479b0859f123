"""One agent node's start-up cost, the claude CLI's share against omg's, and the rehearsal of
graphs/review-loop.yaml leg by leg. Everything runs the pinned claude CLI (`npm ci`) against
the scripted stand-in on loopback: no network, nothing spent.

  1. the CLI alone: `claude -p --output-format stream-json --verbose` answering one text
     turn, prompt on stdin, as omg starts it (fresh config dir each time);
  2. omg around it: `omg run` of a one-node graph with --rehearse — the wall time, the node's
     own recorded duration (the CLI's process) and the difference (omg's share: start-up,
     load, the stand-in, records, commits);
  3. the review loop rehearsed with --max-nodes 2: each leg's nodes, outcome and wall time.

    python bench/agent_node.py [--quick] [--repeats R]
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
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from common import CHILD_ENV, OMG, git_repo, report  # noqa: E402

from omg.runners.claude import ClaudeRunner  # noqa: E402
from omg.runners.registry import rehearsal_env  # noqa: E402
from omg.runners.room import Rooms  # noqa: E402
from omg.stubmodel import StubModel  # noqa: E402
from omg.stubmodel.script import build  # noqa: E402

CLAUDE = ROOT / "node_modules" / ".bin" / "claude"
ONE = "name: one\nnodes:\n  - id: a\n    prompt: say DONE\n    allowed_tools: []\n"
SCRIPT = "rules:\n  - name: done\n    reply: DONE\n"
TASK = "task=add hello.sh printing 'hello, world'"


def cli_alone(work: Path, repeats: int) -> list[float]:
    stub = StubModel(build({"rules": [{"name": "done", "reply": "DONE"}]}, "bench"))
    took = []
    with stub.serve():
        for _ in range(repeats):
            with Rooms(work / "rooms").room() as room:  # a configuration home of its own
                env = room.env(ClaudeRunner().furnish(room, rehearsal_env(CHILD_ENV, stub.url)))
                argv = [str(CLAUDE), "-p", "--output-format", "stream-json", "--verbose"]
                argv += ["--session-id", str(uuid.uuid4())]
                t0 = time.perf_counter()
                res = subprocess.run(
                    argv, input="say DONE", cwd=work, env=env, capture_output=True, text=True
                )
                took.append(time.perf_counter() - t0)
            if '"result":"DONE"' not in res.stdout:
                raise SystemExit(f"claude did not answer:\n{res.stdout[-800:]}{res.stderr[-800:]}")
    return took


def omg_run(work: Path, repeats: int) -> list[tuple[float, float]]:
    (work / "one.yaml").write_text(ONE)
    (work / "s.yaml").write_text(SCRIPT)
    env = {**CHILD_ENV, "OMG_CLAUDE_BIN": str(CLAUDE)}
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


def review_loop_legs(work: Path, most: int) -> list[dict[str, Any]]:
    env = {**CHILD_ENV, "OMG_CLAUDE_BIN": str(CLAUDE)}
    graph = ROOT / "graphs" / "review-loop.yaml"
    script = ROOT / "graphs" / "rehearsals" / "review-loop.yaml"
    run = work / ".omg" / "runs" / "rl"
    legs: list[dict[str, Any]] = []
    argv = [*OMG, "run", str(graph), "-i", TASK, "--run-id", "rl"]
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
        argv = [*OMG, "resume", "rl"]
    return legs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--quick", action="store_true", help="one repeat, the review loop's first leg (a smoke)"
    )
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    if not CLAUDE.exists():
        raise SystemExit(f"{CLAUDE} is missing: run `npm ci` in the checkout")
    work = Path(tempfile.mkdtemp(prefix="omg-agent-bench-"))
    try:
        git_repo(work / "repo")
        cli = cli_alone(work, repeats)
        runs = omg_run(work / "repo", repeats)
        legs = review_loop_legs(work / "repo", 1 if args.quick else 10)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    total, node = med(t for t, _ in runs), med(d for _, d in runs)
    rows = [
        ("claude alone (one text turn)", f"{med(cli):.2f} s", f"min {min(cli):.2f} s"),
        ("omg run, one agent node", f"{total:.2f} s", f"min {min(t for t, _ in runs):.2f} s"),
        ("  of which the node (CLI process)", f"{node:.2f} s", ""),
        ("  of which omg", f"{total - node:.2f} s", f"{100 * (total - node) / total:.0f} %"),
    ]
    rows += [
        (f"review loop leg {g['leg']}: {' '.join(g['nodes'])}",
         f"{g['wall_s']:.2f} s", f"exit {g['exit']}, {g['status']}")
        for g in legs
    ]  # fmt: skip
    data = {
        "cli_alone_s": med(cli),
        "omg_run_s": total,
        "node_s": node,
        "omg_share_s": total - node,
        "review_loop_legs": legs,
        "repeats": repeats,
    }
    report("agent_node", f"One agent node ({repeats} repeat(s), median)", ("what", "time", ""),
           rows, data)  # fmt: skip


if __name__ == "__main__":
    main()
