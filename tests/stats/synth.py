"""Many runs of a review loop made at once, as run branches: each run's events written as a leg
would write them (the loop's rounds, a gate a person decides after a while, a pull request, API
retries, a limit pause), state.json their fold — some lagging their log, as a checkpoint may —
committed straight to ``refs/heads/omg/runs/<id>``, with the figures they must come to.

The statistics tests check ``omg stats`` against the figures; ``bench/stats.py`` times it."""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pygit2

from omg.graph.load import load_graph
from omg.state import apply, empty_state
from omg.state.store import canonical_json

GRAPH = """\
name: {name}
nodes:
  - id: impl
    prompt: "{prompt} Findings: {{{{ feedback.review }}}}"
  - id: review
    depends_on: [impl]
    prompt: Review it. Start with SHIP IT.
    success_check: {{result_matches: '^SHIP IT'}}
    feedback: {{rerun: impl, max: 2, on_exhausted: gate}}
  - id: merge
    type: gate
    depends_on: [review]
"""
#: The two versions of the graph the runs are spread over: one prompt changed.
PROMPTS = ("Implement the task.", "Implement the task; test it before you answer.")
START = datetime(2026, 11, 1, tzinfo=UTC)


@dataclass
class Expected:
    """What the runs must come to, per version key of the graph file's hash."""

    runs: Counter[str] = field(default_factory=Counter)
    outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    rounds: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    endings: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    cost: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    executions: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    waits: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    api_retries: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    limit_pauses: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    lagging: int = 0  # runs whose state.json lags its log


class _Log:
    def __init__(self, rid: str, at: datetime) -> None:
        self.rid, self.at, self.leg = rid, at, 1
        self.events: list[dict[str, Any]] = []

    def emit(self, kind: str, after: float = 1.0, **fields: Any) -> None:
        self.at += timedelta(seconds=after)
        ts = self.at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.events.append(
            {"schema": 1, "seq": len(self.events) + 1, "ts": ts, "run_id": self.rid,
             "leg": self.leg, "event": kind, **fields}
        )  # fmt: skip


def graph_data(version: int, name: str = "review") -> dict[str, Any]:
    """The resolved graph a run of ``version`` (0 or 1) snapshots."""
    text = GRAPH.format(name=name, prompt=PROMPTS[version])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.yaml"
        path.write_text(text)
        return dict(load_graph(path).data)


def _run(rid: str, version: int, data: dict[str, Any], rng: random.Random, n: int) -> _Log:
    """One run's events: rounds of impl → review until it ships or its rounds run out, then
    the gate, decided or not; or an impl that fails; or a run left for its next leg."""
    log = _Log(rid, START + timedelta(hours=n))
    fate = rng.choice(["ship", "ship", "ship", "exhaust", "fail", "wait", "supersede"])
    first: dict[str, Any] = {"graph": data, "graph_source": "g.yaml", "inputs": {}}
    first["graph_sha256"] = f"{version:064x}"
    if n % 3:
        first["pull_request"] = {"number": 1 + n % 40, "head_sha": f"{n:040x}"}
    log.emit("run_started", **first)
    ships_at = rng.choice([0, 1, 1, 2]) if version else rng.choice([1, 2, 2])
    cost = lambda: round(rng.uniform(0.01, 0.2), 4)  # noqa: E731
    if fate == "wait":  # a provider's rate limit outlasted the CLI's retries: the run waits
        log.emit("node_started", node_id="impl", round=0)
        log.emit("node_retried", 40, node_id="impl", reason="limit", cause="run_error",
                 limit="rate", cost_usd=0.0)  # fmt: skip
        log.emit("run_finished", outcome="paused", reason="limit")
        return log
    for rnd in range(3):
        log.emit("node_started", node_id="impl", round=rnd)
        if fate == "fail":
            log.emit("node_failed", 30, node_id="impl", verdict="FAIL", cause="timeout",
                     round=rnd, cost_usd=cost(), detail="timed out")  # fmt: skip
            log.emit("run_finished", outcome="failed", reason="failed")
            return log
        log.emit("node_passed", 20, node_id="impl", verdict="PASS", provenance="self-reported",
                 round=rnd, cost_usd=cost(), api_retries=rng.choice([0, 0, 0, 2]))  # fmt: skip
        log.emit("node_started", node_id="review", round=rnd)
        if fate == "exhaust" and rnd == 2:
            log.emit("node_retried", 10, node_id="review", reason="exhausted",
                     cause="result_mismatch", round=rnd, cost_usd=cost())  # fmt: skip
            log.emit("gate_paused", 0.1, node_id="review.exhausted", declarer="review")
            log.emit("run_finished", outcome="paused", reason="gate", paused_at="review.exhausted")
            return log
        if fate != "exhaust" and rnd == ships_at:
            log.emit("node_passed", 10, node_id="review", verdict="PASS", provenance="verified",
                     round=rnd, cost_usd=cost())  # fmt: skip
            break
        log.emit("node_retried", 10, node_id="review", reason="feedback", cause="result_mismatch",
                 round=rnd + 1, cost_usd=cost(), detail=f"feedback round {rnd + 1}/2")  # fmt: skip
    log.emit("gate_paused", 0.1, node_id="merge")
    log.emit("run_finished", outcome="paused", reason="gate", paused_at="merge")
    if fate == "supersede":
        log.emit("run_superseded", 5, head_sha="f" * 40, by="octocat", reason="a newer head")
        return log
    log.leg = 2
    log.emit("run_started", 60 * rng.randint(1, 240))
    log.emit("gate_approved", 0.1, node_id="merge", by="octocat", state_ref="seq:1", reason="ok")
    log.emit("run_finished", outcome="passed")
    return log


def make_runs(repo_path: Path, n: int, *, seed: int = 7) -> Expected:
    """``n`` runs committed as run branches of the repository at ``repo_path`` (made when
    missing), in one pack as a fetch leaves them (``git fast-import``); the figures they come
    to, by graph file hash."""
    if not (repo_path / ".git").exists():
        pygit2.init_repository(str(repo_path))
    rng = random.Random(seed)
    data = [graph_data(0), graph_data(1)]
    want = Expected()
    stream = bytearray()
    for i in range(n):
        version = i % 2
        rid = f"r{i:05d}"
        log = _run(rid, version, data[version], rng, i)
        upto = len(log.events)
        if i % 5 == 0:  # a checkpoint behind its log: the reader folds the rest
            upto = max(1, len(log.events) - 3)
            want.lagging += 1
        state = empty_state()
        for ev in log.events[:upto]:
            apply(state, ev)  # type: ignore[arg-type]
        snapshot = canonical_json(state)
        for ev in log.events[upto:]:
            apply(state, ev)  # type: ignore[arg-type]
        lines = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in log.events)
        files = {"state.json": snapshot.encode(), "events.jsonl": lines.encode()}
        stream += _commit(f"refs/heads/omg/runs/{rid}", f"omg: run {rid}".encode(), files)
        _expect(want, f"{version:064x}", state, log.events)
    argv = ["git", "-c", "core.fsync=none", "fast-import", "--quiet"]
    env = {"PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(argv, cwd=repo_path, input=bytes(stream), capture_output=True, env=env)
    assert done.returncode == 0, done.stderr.decode()
    return want


def _data(blob: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(blob), blob)


def _commit(ref: str, message: bytes, files: dict[str, bytes]) -> bytes:
    """One commit of ``files`` (and nothing else) on ``ref``, as fast-import reads it."""
    out = b"commit %s\ncommitter omg <omg@example.com> 1790000000 +0000\n" % ref.encode()
    out += _data(message)
    for name, blob in files.items():
        out += b"M 100644 inline %s\n" % name.encode() + _data(blob)
    return out + b"\n"


def _expect(want: Expected, key: str, state: Any, events: list[dict[str, Any]]) -> None:
    want.runs[key] += 1
    status = state["status"]
    outcome = (
        "superseded" if status == "superseded"
        else ("paused" if state["paused_at"] else "waiting") if status == "paused"
        else status
    )  # fmt: skip
    want.outcomes[key][outcome] += 1
    want.cost[key] += state["cost_usd"]
    want.executions[key] += sum(1 for e in events if e["event"] == "node_started")
    want.api_retries[key] += sum(e.get("api_retries", 0) for e in events)
    want.limit_pauses[key] += sum(
        1 for e in events if e["event"] == "node_retried" and e["reason"] == "limit"
    )
    rounds = sum(1 for e in events if e.get("reason") == "feedback")
    if any(e["event"] == "node_passed" and e["node_id"] == "review" for e in events):
        want.endings[key]["converged"] += 1
        want.rounds[key][rounds] += 1
    elif any(e.get("reason") == "exhausted" for e in events):
        want.endings[key]["exhausted"] += 1
    paused = {e["node_id"]: e["ts"] for e in events if e["event"] == "gate_paused"}
    for e in events:
        if e["event"] == "gate_approved":
            gone = datetime.fromisoformat(e["ts"]) - datetime.fromisoformat(paused[e["node_id"]])
            want.waits[key].append(gone.total_seconds())
