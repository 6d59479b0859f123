"""Peers: the same N-node chain of `sh -c true` in omg, in bash (the floor), and — when they are
installed — in LangGraph with its SQLite checkpointer and in Snakemake, in one run.

    pip install -e '.[bench,peers]'
    python bench/peers.py [--quick] [--nodes 300] [--repeats 3] [--python PATH]

Every engine starts each command as its own `sh -c true` child, one after another, and records
its progress durably the way a user would run it (omg: its run directory; LangGraph: a SQLite
checkpoint per step; Snakemake: its output files and .snakemake metadata). `--python` runs the
peers under another interpreter (a venv that has them) while omg runs under this one.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import OMG, bash_floor, chain, median_of, report, wall

LANGGRAPH = """\
import subprocess, sys
from typing import TypedDict
from langgraph.graph import StateGraph, START, END
from langgraph.checkpoint.sqlite import SqliteSaver

N = int(sys.argv[1])

class S(TypedDict):
    done: int

def step(state):
    subprocess.run(["sh", "-c", "true"], check=True)
    return {"done": state["done"] + 1}

g = StateGraph(S)
for i in range(N):
    g.add_node(f"n{i}", step)
g.add_edge(START, "n0")
for i in range(1, N):
    g.add_edge(f"n{i - 1}", f"n{i}")
g.add_edge(f"n{N - 1}", END)
with SqliteSaver.from_conn_string(sys.argv[2]) as saver:
    app = g.compile(checkpointer=saver)
    out = app.invoke({"done": 0}, {"configurable": {"thread_id": "t"}, "recursion_limit": N + 10})
assert out["done"] == N
"""


def snakefile(n: int) -> str:
    rules = [f"rule all:\n    input: 'out/n{n - 1}'\n"]
    rules.append("rule n0:\n    output: 'out/n0'\n    shell: 'sh -c true && touch {output}'\n")
    for i in range(1, n):
        rules.append(
            f"rule n{i}:\n    input: 'out/n{i - 1}'\n    output: 'out/n{i}'\n"
            "    shell: 'sh -c true && touch {output}'\n"
        )
    return "\n".join(rules)


def has(python: str, module: str) -> bool:
    probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: 10 nodes, one repeat")
    ap.add_argument("--nodes", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="the interpreter that has the peers")
    args = ap.parse_args()
    n = 10 if args.quick else args.nodes
    repeats = 1 if args.quick else args.repeats
    work = Path(tempfile.mkdtemp(prefix="omg-peers-"))
    counter = iter(range(10_000))
    try:
        (work / "g.yaml").write_text(chain(n))
        (work / "lg.py").write_text(LANGGRAPH)

        def omg() -> float:
            argv = [*OMG, "run", "g.yaml", "--no-commit", "--run-id", f"r{next(counter)}"]
            return wall(argv, work)

        def langgraph() -> float:
            db = work / f"lg{next(counter)}.sqlite"
            return wall([args.python, "lg.py", str(n), str(db)], work)

        def snakemake() -> float:
            d = work / f"sm{next(counter)}"
            d.mkdir()
            (d / "Snakefile").write_text(snakefile(n))
            return wall([args.python, "-m", "snakemake", "--cores", "1", "--quiet", "all"], d)

        engines = [("bash (floor)", lambda: bash_floor(n, work)), ("omg", omg)]
        if has(args.python, "langgraph.checkpoint.sqlite"):
            engines.append(("LangGraph + SqliteSaver", langgraph))
        if has(args.python, "snakemake"):
            engines.append(("Snakemake", snakemake))
        results = {name: median_of(fn, repeats) for name, fn in engines}
        floor = results["bash (floor)"]
        rows = [[name, f"{s:.3f}", f"{s / floor:.1f}x"] for name, s in results.items()]
        missing = {"LangGraph + SqliteSaver", "Snakemake"} - set(results)
        for name in sorted(missing):
            rows.append([name, "not installed", "-"])
        data = {
            name: {"s": round(s, 4), "ratio": round(s / floor, 2)} for name, s in results.items()
        }
        title = f"{n}-node chain of `sh -c true`, median of {repeats}"
        report("peers", title, ["engine", "wall s", "vs bash"], rows, data)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
