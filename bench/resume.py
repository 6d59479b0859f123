"""Resume start-up: `omg status RUN` and `omg resume RUN` (ms, with the per-execution ledger
and with `--by-node`, which reads state.json only) on runs whose history is 1k, 10k and
100k events over 100 and 1,000 nodes.
The cost must follow the state, not the history.

    python bench/resume.py [--quick] [--repeats 5] [--against CHECKOUT] [--events 100000]

Each run directory is written as a long-lived run leaves it: many legs of retried attempts
(events.jsonl and its chunks), state.json their fold, one node left pending. `resume` runs that
one node (`true`); `status` shows the ledger of the run. Every figure but the "first look"s is
of a run looked at once before on this machine with `omg status RUN` (its verified point and
the ledger's rows kept with it recorded, as a `status` or a leg's report leaves them); "first
look" is `status --by-node`, and "first look (status)" is `status`, on a run never looked at
here (a fresh clone's). ``--against CHECKOUT`` times another tree's sources (``PYTHONPATH``) in turn
with this one's, repeat by repeat.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import CHILD_ENV, OMG, chain, report, wall

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from omg.graph.load import load_graph
from omg.state import fold
from omg.state.store import CHUNK_EVENTS, RunDir


def history(graph_data: dict[str, Any], nodes: int, events: int) -> list[dict[str, Any]]:
    """A valid event stream of about ``events`` lines that leaves the last node pending."""
    out: list[dict[str, Any]] = []

    def emit(leg: int, kind: str, **fields: Any) -> None:
        base = {"schema": 1, "seq": len(out) + 1, "ts": "2026-12-01T00:00:00.000Z"}
        out.append({**base, "run_id": "big", "leg": leg, "event": kind, **fields})

    emit(1, "run_started", graph=graph_data, graph_source="g.yaml", graph_sha256="", inputs={})
    for i in range(nodes - 1):
        emit(1, "node_started", node_id=f"n{i}")
        emit(1, "node_passed", node_id=f"n{i}", verdict="PASS", provenance="exit-only",
             cost_usd=0.0, duration_s=0.001)  # fmt: skip
    emit(1, "run_finished", outcome="paused", reason="leg_budget")
    leg = 1
    while len(out) < events - 3:
        leg += 1
        emit(leg, "run_started")
        for _ in range(min(100, (events - len(out) - 2) // 2)):
            emit(leg, "node_started", node_id=f"n{nodes - 1}")
            emit(leg, "node_retried", node_id=f"n{nodes - 1}", reason="leg_budget",
                 cause="nonzero_exit", cost_usd=0.0)  # fmt: skip
        emit(leg, "run_finished", outcome="paused", reason="leg_budget")
    return out


def build(work: Path, nodes: int, events: int) -> Path:
    (work / "g.yaml").write_text(chain(nodes))
    graph = load_graph(work / "g.yaml")
    evs = history(dict(graph.data), nodes, events)
    rd = RunDir(work / "runs" / "big")
    rd.path.mkdir(parents=True)
    rd.chunks_path.mkdir()
    # as a leg leaves it: events.jsonl holds the first CHUNK_EVENTS, then chunks of as many
    for i in range(0, len(evs), CHUNK_EVENTS):
        path = rd.chunk_path(i + 1) if i else rd.events_path
        path.write_text("".join(_line(e) for e in evs[i : i + CHUNK_EVENTS]))
    rd.write_state(fold(evs))
    return rd.path


def timed(
    argv: list[str], work: Path, template: Path, env: dict[str, str], *, looked: bool = True
) -> float:
    """One fresh process on a fresh copy of the run (a resume changes it); ``looked``: with the
    verified point an earlier look left."""
    shutil.rmtree(work / "runs" / "big")
    shutil.copytree(template.with_name("template"), work / "runs" / "big")
    if not looked:
        for cache in ("verified.json", "ledger.json"):
            (work / "runs" / "big" / cache).unlink(missing_ok=True)
    return wall(argv, work, env=env)


def _line(ev: dict[str, Any]) -> str:
    import json

    return json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: one small run, one repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--against", type=Path, help="another checkout's sources, timed in turn")
    ap.add_argument("--events", type=int, help="only the runs of this many events")
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    shapes = [(20, 500)] if args.quick else [
        (n, e) for n in (100, 1000) for e in (1_000, 10_000, 100_000)
        if e > 2 * n and args.events in (None, e)
    ]  # fmt: skip
    envs = {"": CHILD_ENV}
    if args.against is not None:
        envs["before"] = {**CHILD_ENV, "PYTHONPATH": str(args.against.resolve())}
    names = ("status", "status --by-node", "resume", "resume --by-node", "first look",
             "first look (status)")  # fmt: skip
    rows, data = [], []
    for nodes, events in shapes:
        work = Path(tempfile.mkdtemp(prefix="omg-resume-"))
        try:
            template = build(work, nodes, events)
            status = [*OMG, "status", "big", "--runs-dir", "runs"]
            resume = [*OMG, "resume", "big", "--runs-dir", "runs", "--no-commit"]
            wall(status, work)  # a first look: the point and the rows it leaves are kept
            shutil.copytree(template, template.with_name("template"))
            argvs = (status, [*status, "--by-node"], resume, [*resume, "--by-node"])
            cases = [(n, a, True) for n, a in zip(names, argvs, strict=False)]
            cases.append((names[-2], [*status, "--by-node"], False))
            cases.append((names[-1], status, False))
            times: dict[str, list[list[float]]] = {tag: [] for tag in envs}
            for _, argv, looked in cases:
                runs: dict[str, list[float]] = {tag: [] for tag in envs}
                for _ in range(repeats):
                    for tag, env in envs.items():
                        took = timed(argv, work, template, env, looked=looked)
                        runs[tag].append(took * 1000)
                for tag in envs:
                    times[tag].append(runs[tag])
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for tag in envs:
            ms = [statistics.median(r) for r in times[tag]]
            rows.append([tag or "this", nodes, events, *(f"{m:.0f}" for m in ms)])
            data.append({"tree": tag or "this", "nodes": nodes, "events": events,
                         **{k: round(m, 1) for k, m in zip(names, ms, strict=True)}})  # fmt: skip
    header = ["tree", "nodes", "events", *names]
    report("resume", f"start-up on long runs (ms), median of {repeats}", header, rows, data)


if __name__ == "__main__":
    main()
