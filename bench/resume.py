"""Resume start-up: `omg status RUN` and `omg resume RUN` (ms, with the per-execution ledger
and with `--by-node`, which reads state.json only) on runs whose history is 1k, 10k and
100k events over 100 and 1,000 nodes.
The cost must follow the state, not the history.

    python bench/resume.py [--quick] [--repeats 5]

Each run directory is written as a long-lived run leaves it: many legs of retried attempts
(events.jsonl and its chunks), state.json their fold, one node left pending. `resume` runs that
one node (`true`); `status` shows the ledger of the run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import OMG, chain, median_of, report, wall

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


def timed(argv: list[str], work: Path, template: Path) -> float:
    """One fresh process on a fresh copy of the run (a resume changes it)."""
    shutil.rmtree(work / "runs" / "big")
    shutil.copytree(template.with_name("template"), work / "runs" / "big")
    return wall(argv, work)


def _line(ev: dict[str, Any]) -> str:
    import json

    return json.dumps(ev, sort_keys=True, separators=(",", ":")) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: one small run, one repeat")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    shapes = [(20, 500)] if args.quick else [
        (n, e) for n in (100, 1000) for e in (1_000, 10_000, 100_000) if e > 2 * n
    ]  # fmt: skip
    rows, data = [], []
    for nodes, events in shapes:
        work = Path(tempfile.mkdtemp(prefix="omg-resume-"))
        try:
            template = build(work, nodes, events)
            shutil.copytree(template, template.with_name("template"))
            status = [*OMG, "status", "big", "--runs-dir", "runs"]
            resume = [*OMG, "resume", "big", "--runs-dir", "runs", "--no-commit"]
            times = [
                median_of(lambda argv=argv, w=work, t=template: timed(argv, w, t), repeats) * 1000
                for argv in (status, [*status, "--by-node"], resume, [*resume, "--by-node"])
            ]
        finally:
            shutil.rmtree(work, ignore_errors=True)
        rows.append([nodes, events, *(f"{ms:.0f}" for ms in times)])
        names = ("status_ms", "status_by_node_ms", "resume_ms", "resume_by_node_ms")
        data.append({"nodes": nodes, "events": events,
                     **{k: round(ms, 1) for k, ms in zip(names, times, strict=True)}})  # fmt: skip
    header = ["nodes", "events", "status", "status --by-node", "resume", "resume --by-node"]
    report("resume", f"start-up on long runs, median of {repeats}", header, rows, data)


if __name__ == "__main__":
    main()
