"""on_fail: halt stops launching and lets in-flight work finish; continue prunes the subtree."""

from __future__ import annotations

from pathlib import Path

from kit import of, omg_run, started_order, write_graph


def test_halt_stops_launching_and_lets_in_flight_nodes_finish(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: halting
        concurrency: 2
        on_fail: halt
        nodes:
          - id: slow
            run: sleep 0.5; echo finished
          - id: bad
            run: 'echo broken; exit 1'
          - id: queued
            run: echo never
          - id: child
            depends_on: [slow]
            run: echo never
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    evs = r.events()
    assert started_order(evs) == ["slow", "bad"]
    # the node in flight when `bad` failed finished and was recorded
    assert state["nodes"]["slow"]["verdict"] == "PASS"
    assert r.artifact("slow") == "finished\n"
    assert state["nodes"]["bad"]["verdict"] == "FAIL"
    assert "queued" not in state["nodes"] and "child" not in state["nodes"]
    assert evs[-1] == {**evs[-1], "event": "run_finished", "outcome": "failed"}
    assert state["status"] == "failed"


def test_continue_prunes_the_failed_subtree_and_runs_the_rest(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: continuing
        concurrency: 1
        on_fail: continue
        nodes:
          - id: bad
            run: 'echo broken; exit 1'
          - id: child
            depends_on: [bad]
            run: echo never
          - id: grandchild
            depends_on: [child, other]
            run: echo never
          - id: other
            run: echo other
          - id: other-child
            depends_on: [other]
            run: echo other-child
    """,
    )
    r = omg_run(omg, g, process=True)  # the exit code and summary a process shows
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    evs = r.events()
    assert started_order(evs) == ["bad", "other", "other-child"]
    nodes = state["nodes"]
    assert nodes["bad"]["verdict"] == "FAIL"
    assert nodes["other"]["verdict"] == nodes["other-child"]["verdict"] == "PASS"
    assert "child" not in nodes and "grandchild" not in nodes
    assert of(evs, "run_finished")[0]["outcome"] == "failed"
    assert "failed: bad" in r.out
