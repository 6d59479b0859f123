"""The shipped stalled loop (graphs/stalled-loop.yaml) with the real CLI against its rehearsal:
the reviewer repeats itself and the implementer edits nothing, so the loop stops after the
second identical round instead of spending all four; switched off, it spends them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from kit import omg_in_process

from .conftest import ROOT, Env


def stalled(repo: Path, env: Env, graph: str) -> tuple[int, list[dict[str, Any]], str]:
    (repo / "graphs" / "rehearsals").mkdir(parents=True)
    (repo / "graphs" / "stalled-loop.yaml").write_text(graph)
    shutil.copy(ROOT / "graphs/rehearsals/stalled-loop.yaml", repo / "graphs/rehearsals")
    done = omg_in_process("run", "graphs/stalled-loop.yaml", "-i", "task=add hello.sh",
                          "--run-id", "s", "--rehearse", "graphs/rehearsals/stalled-loop.yaml",
                          cwd=repo, env=env())  # fmt: skip
    lines = (repo / ".omg/runs/s/events.jsonl").read_text().splitlines()
    return done.returncode, [json.loads(x) for x in lines], done.stdout + done.stderr


def reviews(evs: list[dict[str, Any]]) -> int:
    return sum(1 for e in evs if e["event"] == "node_started" and e["node_id"] == "review")


def test_the_stalled_loop_stops_after_the_second_identical_round(repo: Path, env: Env) -> None:
    code, evs, said = stalled(repo, env, (ROOT / "graphs/stalled-loop.yaml").read_text())
    assert code == 4, said  # paused at review.exhausted for a person
    assert reviews(evs) == 2
    [escalated] = [e for e in evs if e["event"] == "node_retried" and e["reason"] == "exhausted"]
    assert escalated["cause"] == "no_progress"
    assert "the findings repeat the previous round's" in escalated["detail"]
    assert "left its lane (lane) exactly as the previous round did" in escalated["detail"]
    [paused] = [e for e in evs if e["event"] == "gate_paused"]
    assert paused["node_id"] == "review.exhausted"


def test_switched_off_the_stalled_loop_spends_every_round(repo: Path, env: Env) -> None:
    graph = (ROOT / "graphs/stalled-loop.yaml").read_text()
    # two rounds, not the shipped four: one round past where the rule would stop it shows it
    # switched off, at two fewer rounds of the CLI
    off = graph.replace("max: 4, on_exhausted: gate}", "max: 2, on_exhausted: gate, "
                        "stop_on_no_progress: false}")  # fmt: skip
    assert off != graph
    code, evs, said = stalled(repo, env, off)
    assert code == 4, said
    assert reviews(evs) == 3  # 1 + 2 rounds, where the rule stops after 2 reviews
    assert not [e for e in evs if e.get("cause") == "no_progress"]
