"""`omg status`: every run's derived status at a glance, and one run in detail with what to do."""

from __future__ import annotations

from pathlib import Path

from omg.state.vouched import VERIFIED

from .conftest import Cli
from .helpers import RUNS, events, kill_group, launches, popen_omg, run_path, wait_for, write_graph

HANG = "'while [ ! -f go ]; do sleep 0.01; done'"


def row(listing: str, run_id: str) -> list[str]:
    line = next(ln for ln in listing.splitlines() if ln.split()[0] == run_id)
    return line.split()


def snapshot_bytes(root: Path) -> dict[str, bytes]:
    """Every file of every run; the record check's cache (verified.json) is no part of one."""
    files = (root / RUNS).rglob("*")
    return {str(p): p.read_bytes() for p in files if p.is_file() and p.name != VERIFIED}


def test_status_lists_every_run_with_its_derived_status(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, "name: ok\nnodes:\n  - id: a\n    run: 'true'\n", "ok.yaml")
    write_graph(tmp_path, "name: bad\nnodes:\n  - id: a\n    run: 'false'\n", "bad.yaml")
    write_graph(tmp_path, "name: gated\nnodes:\n  - id: g\n    type: gate\n", "gate.yaml")
    write_graph(tmp_path, f"name: hang\nnodes:\n  - id: h\n    run: {HANG}\n", "hang.yaml")
    assert cli("run", "ok.yaml", "--run-id", "passed-run").returncode == 0
    assert cli("run", "bad.yaml", "--run-id", "failed-run").returncode == 1
    assert cli("run", "gate.yaml", "--run-id", "gate-run").returncode == 4
    assert cli("run", "ok.yaml", "--run-id", "budget-run", "--max-nodes", "0").returncode == 4

    dead = popen_omg(tmp_path, "run", "hang.yaml", "--run-id", "dead-run", "--no-commit")
    wait_for(lambda: ("h", 0) in launches(events(run_path(tmp_path, "dead-run"))))
    kill_group(dead)
    live = popen_omg(tmp_path, "run", "hang.yaml", "--run-id", "live-run", "--no-commit")
    wait_for(lambda: ("h", 0) in launches(events(run_path(tmp_path, "live-run"))))
    try:
        before = snapshot_bytes(tmp_path)
        res = cli("status")
        assert res.returncode == 0, res.stderr
        out = res.stdout
        assert out.splitlines()[0].split() == ["RUN", "GRAPH", "STATUS", "LEGS", "COST"]
        assert row(out, "passed-run") == ["passed-run", "ok", "passed", "1", "$0.0000"]
        assert row(out, "failed-run") == ["failed-run", "bad", "failed", "1", "$0.0000"]
        assert row(out, "gate-run")[:6] == ["gate-run", "gated", "paused", "at", "gate", "g"]
        assert " ".join(row(out, "budget-run")[2:6]) == "paused for leg budget"
        assert row(out, "dead-run")[2] == "abandoned"
        assert row(out, "live-run")[2] == "running"
        # Deriving the statuses wrote nothing anywhere (but how far each record was verified).
        assert snapshot_bytes(tmp_path) == before
    finally:
        (tmp_path / "go").touch()
        live.communicate(timeout=30)
    assert row(cli("status").stdout, "live-run")[2] == "passed"


def test_one_run_in_detail_shows_the_ledger_and_the_next_step(cli: Cli, tmp_path: Path) -> None:
    write_graph(
        tmp_path,
        """\
name: detail
nodes:
  - id: build
    run: echo built
  - id: ship-it
    type: gate
    depends_on: [build]
  - id: deploy
    depends_on: [ship-it]
    run: 'true'
""",
    )
    assert cli("run", "g.yaml", "--run-id", "r").returncode == 4
    out = cli("status", "r").stdout
    lines = out.splitlines()
    assert lines[0].startswith("Run r")
    assert lines[1].split() == [
        "NODE",
        "LEG",
        "VERDICT",
        "ROUND",
        "TRIES",
        "COST",
        "TIME",
        "DETAIL",
    ]
    assert any(ln.split()[:4] == ["build", "1", "PASS", "(exit-only)"] for ln in lines)
    assert "status: paused at gate ship-it (1 leg(s))" in out
    assert "omg resume r --approve ship-it" in out and "--reject ship-it" in out

    assert cli("resume", "r", "--reject", "ship-it", "--reason", "not today").returncode == 1
    out = cli("status", "r").stdout
    assert "status: failed (2 leg(s))" in out
    assert "omg resume r --retry-failed" in out
    assert "send-backs: 1" in out


def test_status_of_an_abandoned_leg_says_how_to_continue(cli: Cli, tmp_path: Path) -> None:
    write_graph(tmp_path, f"name: hang\nnodes:\n  - id: h\n    run: {HANG}\n")
    proc = popen_omg(tmp_path, "run", "g.yaml", "--run-id", "r", "--no-commit")
    wait_for(lambda: ("h", 0) in launches(events(run_path(tmp_path, "r"))))
    kill_group(proc)
    (tmp_path / "go").touch()
    # a node the kill caught between its fork and its exec holds the leg's lock until it execs
    wait_for(lambda: "status: abandoned" in cli("status", "r").stdout, timeout=10)
    out = cli("status", "r").stdout
    assert "status: abandoned" in out and "`omg resume r`" in out
    assert cli("resume", "r").returncode == 0
    assert "status: passed (2 leg(s))" in cli("status", "r").stdout


def test_status_with_no_runs_and_of_a_missing_run(cli: Cli, tmp_path: Path) -> None:
    res = cli("status")
    assert res.returncode == 0 and "no runs" in res.stdout
    res = cli("status", "ghost")
    assert res.returncode == 3 and "no run 'ghost'" in res.stderr
