"""Pushes at checkpoints: a leg of fast nodes pushes its run branch at its start and end, not
per node; OMG_PUSH_EVERY=0 pushes every commit; and a runner lost between pushes loses only that
window — the next leg, on another machine, runs those nodes again, none skipped and none
counted twice, while the clone that kept them is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pygit2
from kit import omg_call

from .helpers import (
    bare_origin,
    child_env,
    clone_of,
    git_checkout,
    kill_group,
    log_lines,
    popen_omg,
    run_path,
    wait_for,
)

RUN = "refs/heads/omg/runs/r"


def chain(n: int, slow: str = "", gate_after: str = "") -> str:
    """n nodes in a chain, each logging its name and checkout; ``slow`` stops to be killed
    (once: a marker file says it was); a gate ``ok`` after ``gate_after``."""
    lines = ["name: chain", "nodes:"]
    before = ""
    for i in range(n):
        nid = f"n{i}"
        run = f"echo {nid}-$(basename $PWD) >> ../log.txt"
        if nid == slow:
            run = f"{run}; if [ ! -f ../killed ]; then touch ../{nid}-started; sleep 60; fi"
        dep = f", depends_on: [{before}]" if before else ""
        lines.append(f"  - {{id: {nid}{dep}, run: '{run}'}}")
        before = nid
        if nid == gate_after:
            lines.append(f"  - {{id: ok, type: gate, depends_on: [{nid}]}}")
            before = "ok"
    return "\n".join(lines) + "\n"


def _origin(tmp_path: Path, graph: str) -> tuple[Path, Path, str]:
    a = git_checkout(tmp_path / "a", {"g.yaml": graph})
    bare = tmp_path / "origin.git"
    url = bare_origin(a, bare)
    pygit2.Repository(str(bare)).config["core.logAllRefUpdates"] = "always"
    return a, bare, url


def _pushes(bare: Path) -> int:
    """How many times the remote's run branch moved (each push moves it once)."""
    repo = pygit2.Repository(str(bare))
    return sum(1 for _ in repo.references[RUN].log())


def _omg(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return omg_call(*args, cwd=cwd, env=child_env(**env))


def _remote_events(bare: Path) -> list[dict[str, Any]]:
    import json

    repo = pygit2.Repository(str(bare))
    tree = repo.revparse_single(RUN).peel(pygit2.Commit).tree
    text = repo[tree["events.jsonl"].id].data.decode()
    if "events" in tree:
        chunks = repo[tree["events"].id].peel(pygit2.Tree)
        text += "".join(repo[e.id].data.decode() for e in sorted(chunks, key=lambda e: e.name))
    return [json.loads(line) for line in text.splitlines()]


def test_a_leg_of_fast_nodes_pushes_at_its_start_and_end_whatever_their_number(
    tmp_path: Path,
) -> None:
    a, bare, _ = _origin(tmp_path, chain(12))
    done = _omg(a, "run", "g.yaml", "--run-id", "r", "--push", "origin")
    assert done.returncode == 0, done.stderr
    assert _pushes(bare) <= 3
    local = pygit2.Repository(str(a)).references[RUN].target
    assert pygit2.Repository(str(bare)).references[RUN].target == local  # the end was pushed


def test_push_every_zero_pushes_every_commit(tmp_path: Path) -> None:
    a, bare, _ = _origin(tmp_path, chain(4))
    done = _omg(a, "run", "g.yaml", "--run-id", "r", "--push", "origin", OMG_PUSH_EVERY="0")
    assert done.returncode == 0, done.stderr
    assert _pushes(bare) == 4 + 2  # the leg's start, each node, the end


def test_a_bad_push_interval_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    a, _, _ = _origin(tmp_path, chain(2))
    done = _omg(a, "run", "g.yaml", "--run-id", "r", "--push", "origin", OMG_PUSH_EVERY="soon")
    assert done.returncode == 2, done.stderr
    assert "OMG_PUSH_EVERY='soon'" in done.stderr
    assert not log_lines(tmp_path)


def test_a_runner_lost_between_pushes_loses_only_that_window_and_nothing_counts_twice(
    tmp_path: Path,
) -> None:
    a, bare, url = _origin(tmp_path, chain(5, slow="n3", gate_after="n0"))
    paused = _omg(a, "run", "g.yaml", "--run-id", "r", "--push", "origin")
    assert paused.returncode == 4, paused.stderr  # at the gate: pushed
    proc = popen_omg(a, "resume", "r", "--approve", "ok", "--by", "eve", "--push", "origin")
    try:
        wait_for(lambda: (tmp_path / "n3-started").exists(), timeout=60)
    finally:
        kill_group(proc)  # the runner is lost with its disk: only what was pushed survives
    (tmp_path / "killed").touch()
    local = _local_events(run_path(a, "r"))
    assert [e["node_id"] for e in local if e["event"] == "node_passed"] == [
        "n0", "ok", "n1", "n2",
    ]  # fmt: skip
    pushed = _remote_events(bare)  # leg 2's start (with the decision), none of its nodes
    assert [e["node_id"] for e in pushed if e["event"] == "node_passed"] == ["n0", "ok"]

    b = clone_of(url, tmp_path / "b")
    done = _omg(b, "resume", "r", "--fetch", "origin", "--push", "origin")
    assert done.returncode == 0, done.stderr
    record = _remote_events(bare)
    passed = [e["node_id"] for e in record if e["event"] == "node_passed"]
    assert passed == ["n0", "ok", "n1", "n2", "n3", "n4"]  # each once: the window ran again
    assert [e["leg"] for e in record if e["event"] == "node_passed"] == [1, 2, 3, 3, 3, 3]
    assert log_lines(tmp_path) == [
        "n0-a", "n1-a", "n2-a", "n3-a", "n1-b", "n2-b", "n3-b", "n4-b",
    ]  # fmt: skip

    again = _omg(a, "resume", "r", "--push", "origin")  # the clone that kept the window
    assert again.returncode == 3, again.stderr
    assert "moved on" in again.stderr or "diverged" in again.stderr
    assert len(log_lines(tmp_path)) == 8  # nothing ran


def _local_events(rd: Path) -> list[dict[str, Any]]:
    from omg.state.store import RunDir

    return list(RunDir(rd).read_events())
