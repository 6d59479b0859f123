"""One leg at a time per run: a flock on leg.lock, released by the OS, never unlinked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import Cli
from .helpers import events, kill_group, launches, popen_omg, run_path, wait_for, write_graph

GRAPH = """\
name: held
nodes:
  - id: wait
    run: 'touch started; while [ ! -f go ]; do sleep 0.01; done'
  - id: gate
    type: gate
    depends_on: [wait]
"""


def test_a_second_leg_is_refused_while_the_first_holds_the_lock(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, GRAPH)
    rd = run_path(tmp_path, "r")
    first = popen_omg(tmp_path, "run", "g.yaml", "--run-id", "r", "--no-commit")
    try:
        wait_for(lambda: ("wait", 0) in launches(events(rd)))
        lock = rd / "leg.lock"
        inode = lock.stat().st_ino
        assert lock.read_text().splitlines() == ["omg-leg-lock 1", str(first.pid)]
        before = (rd / "events.jsonl").read_bytes()
        for args in (
            ("resume", "r"),
            ("resume", "r", "--retry-failed"),
            ("resume", "r", "--approve", "gate"),
            ("replay", "r", "--write"),
        ):
            res = cli(*args)
            assert res.returncode == 3, (args, res.stderr)
            assert "has a leg in flight" in res.stderr and "leg.lock" in res.stderr
            assert "Traceback" not in res.stderr
        again = cli("run", "g.yaml", "--run-id", "r")
        assert again.returncode == 3 and "already exists" in again.stderr
        assert (rd / "events.jsonl").read_bytes() == before
        assert "running" in cli("status").stdout
    finally:
        (tmp_path / "go").touch()
        _, err = first.communicate(timeout=30)
    assert first.returncode == 4, err
    # The lock outlives every leg: same file, same inode, free again.
    assert lock.exists() and lock.stat().st_ino == inode
    assert cli("resume", "r", "--approve", "gate").returncode == 0
    assert lock.exists() and lock.stat().st_ino == inode


def test_a_killed_leg_releases_the_lock_without_anyone_removing_it(
    cli: Cli, tmp_path: Path
) -> None:
    write_graph(tmp_path, GRAPH)
    rd = run_path(tmp_path, "r")
    proc = popen_omg(tmp_path, "run", "g.yaml", "--run-id", "r", "--no-commit")
    # the node's own mark, not its node_started event: that is recorded before the child is
    # spawned, and a leg killed mid-spawn leaves the half-made child holding every descriptor
    # (the lock's too) until it has closed them on its way to exec
    wait_for(lambda: (tmp_path / "started").exists())
    inode = (rd / "leg.lock").stat().st_ino
    kill_group(proc)
    (tmp_path / "go").touch()
    res = cli("resume", "r")
    assert res.returncode == 4, res.stderr
    assert (rd / "leg.lock").stat().st_ino == inode


def test_lock_in_process(tmp_path: Path) -> None:
    from omg.errors import StateError
    from omg.state.store import RunDir

    first, second = RunDir(tmp_path / "r"), RunDir(tmp_path / "r")
    assert second.probe_lock() == "free"
    first.lock()
    try:
        assert second.probe_lock() == "held"
        with pytest.raises(StateError, match="has a leg in flight"):
            second.lock()
    finally:
        first.close()
    assert (tmp_path / "r" / "leg.lock").exists()
    assert second.probe_lock() == "free"
    second.lock()
    second.close()
    assert os.listdir(tmp_path / "r") == ["leg.lock"]
