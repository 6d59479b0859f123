"""Node timeouts: the whole process group is killed, and the failure is a `timeout`."""

from __future__ import annotations

import time
from pathlib import Path

from kit import of, omg_run, write_graph


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie awaiting its reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_timeout_kills_the_whole_process_group(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: hang
        nodes:
          - id: hang
            run: 'sleep 60 & echo $! > grandchild.pid; echo started; wait'
            timeout: 500ms
    """,
    )
    t0 = time.monotonic()
    r = omg_run(omg, g, process=True)
    wall = time.monotonic() - t0
    assert r.code == 1, r.explain()
    assert wall < 10, wall
    state = run_dir_check(r.dir)
    rec = state["nodes"]["hang"]
    assert (rec["verdict"], rec["cause"], rec["judged"]) == ("FAIL", "timeout", False)
    assert "timed out after 0.5s" in rec["detail"]
    pid = int((tmp_path / "grandchild.pid").read_text())
    deadline = time.monotonic() + 3
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), f"grandchild sleep {pid} survived the node's timeout"


def test_a_timeout_is_retried_only_when_listed(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: slowthenfast
        nodes:
          - id: slow
            run: 'if [ -f tried ]; then echo fast; else touch tried; sleep 30; fi'
            timeout: 300ms
            retry: {max: 1, on: [timeout]}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)
    assert [e["cause"] for e in of(r.events(), "node_retried")] == ["timeout"]
    assert state["nodes"]["slow"]["attempts"] == 2


def test_a_verify_timeout_is_not_a_judgment(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: slowverify
        nodes:
          - id: impl
            run: echo impl
          - id: check
            depends_on: [impl]
            run: echo checked
            success_check:
              verify: {command: sleep 30, timeout: 300ms}
            feedback: {rerun: impl, max: 2}
    """,
    )
    t0 = time.monotonic()
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    assert time.monotonic() - t0 < 10
    state = run_dir_check(r.dir)
    rec = state["nodes"]["check"]
    assert rec["judged"] is False
    assert "timed out" in rec["detail"]
    assert of(r.events(), "node_retried") == []
