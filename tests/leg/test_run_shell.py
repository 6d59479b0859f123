"""Shell graphs end to end: files, artifacts, order, progress, the ledger and exit codes."""

from __future__ import annotations

from pathlib import Path

import pygit2
from kit import events, of, omg_run, started_order, write_graph


def test_a_chain_passes_and_records_everything(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: chain
        nodes:
          - id: hello
            run: echo hello; echo "to stderr" >&2
          - id: shout
            depends_on: [hello]
            run: tr a-z A-Z < {{ artifacts.hello }}
          - id: inline
            depends_on: [shout]
            run: printf '%s|' {{ artifacts.shout | inline }}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    state = run_dir_check(r.dir)

    # stdout and stderr are both captured into the artifact; placeholders pass data along
    assert r.artifact("hello") == "hello\nto stderr\n"
    assert r.artifact("shout") == "HELLO\nTO STDERR\n"
    assert r.artifact("inline") == "HELLO\nTO STDERR\n|"
    assert state["status"] == "passed"
    for nid in ("hello", "shout", "inline"):
        rec = state["nodes"][nid]
        assert (rec["verdict"], rec["provenance"], rec["round"], rec["attempts"]) == (
            "PASS",
            "exit-only",
            0,
            1,
        )

    evs = r.events()
    assert [e["event"] for e in evs] == [
        "run_started",
        "node_started",
        "node_passed",
        "node_started",
        "node_passed",
        "node_started",
        "node_passed",
        "run_finished",
    ]
    assert evs[-1]["outcome"] == "passed"

    # progress: one line per node start and finish on stderr
    for nid in ("hello", "shout", "inline"):
        assert f"▶ {nid}  running…" in r.err
        assert f"✓ {nid}  PASS (exit-only)" in r.err
    # the ledger at the end: a row per node and the total
    assert "NODE" in r.out and "VERDICT" in r.out
    assert "TOTAL COST: $0.0000" in r.out
    assert "passed." in r.out


def test_a_failing_node_fails_the_run_and_keeps_its_output(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: failing
        nodes:
          - id: build
            run: 'echo "compiling"; echo "error: it broke" >&2; exit 2'
          - id: after
            depends_on: [build]
            run: echo never
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    rec = state["nodes"]["build"]
    assert rec["verdict"] == "FAIL"
    assert rec["cause"] == "nonzero_exit"
    assert rec["judged"] is True
    assert "exit code 2" in rec["detail"]
    assert (r.dir / "failed" / "build.out").read_text() == "compiling\nerror: it broke\n"
    assert not (r.dir / "artifacts" / "build.out").exists()
    assert "after" not in state["nodes"]
    assert of(r.events(), "node_started", "after") == []
    assert state["status"] == "failed"
    assert "✗ build  FAIL" in r.err
    assert "--retry-failed" in r.out


def test_shell_nodes_run_in_their_cwd(tmp_path: Path, omg, run_dir_check) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "marker.txt").write_text("in sub\n")
    g = write_graph(
        tmp_path,
        """
        name: cwd
        nodes:
          - id: here
            run: pwd
          - id: there
            cwd: sub
            run: pwd; cat marker.txt
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert Path(r.artifact("here").strip()).resolve() == tmp_path.resolve()
    there = r.artifact("there").splitlines()
    assert Path(there[0]).resolve() == (tmp_path / "sub").resolve()
    assert there[1] == "in sub"


def test_launch_order_is_topological_with_ties_by_declaration(
    tmp_path: Path, omg, run_dir_check
) -> None:
    # declared out of dependency order on purpose; with one slot the launch order is the
    # topological order, ties broken by declaration order — the same on every run
    g = write_graph(
        tmp_path,
        """
        name: order
        nodes:
          - {id: c, depends_on: [a], run: "true"}
          - {id: a, run: "true"}
          - {id: b, run: "true"}
          - {id: e, depends_on: [b, c], run: "true"}
          - {id: d, depends_on: [b], run: "true"}
    """,
    )
    orders = []
    for rid in ("r1", "r2"):
        r = omg_run(omg, g, "--concurrency", "1", run_id=rid)
        assert r.code == 0, r.explain()
        run_dir_check(r.dir)
        orders.append(started_order(r.events()))
    assert orders[0] == orders[1] == ["a", "c", "b", "e", "d"]

    # with room for everything, the initial ready set launches in declaration order too
    r = omg_run(omg, g, "--concurrency", "4", run_id="wide")
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert started_order(r.events())[:2] == ["a", "b"]


def test_the_event_is_recorded_before_dependents_launch(tmp_path: Path, omg, run_dir_check) -> None:
    # `peek` reads the run directory while the run is going: its parent's PASS is already in
    # events.jsonl, and state.json is a whole snapshot (written atomically at the leg's start
    # and at checkpoints; a reader folds the log's tail onto it)
    g = write_graph(
        tmp_path,
        """
        name: peek
        nodes:
          - id: first
            run: echo one
          - id: peek
            depends_on: [first]
            run: |
              rd=$(dirname "$(dirname {{ artifacts.first }})")
              grep -c '"node_passed"' "$rd/events.jsonl"
              cat "$rd/state.json"
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    import json

    lines = r.artifact("peek").split("\n", 1)
    assert lines[0] == "1"
    mid = json.loads(lines[1])
    assert mid["seq"] >= 1 and mid["nodes"].get("first", {}).get("verdict", "") in ("", "PASS")
    assert "peek" not in mid["nodes"]
    # no temp files are left behind by the atomic writes
    assert not [p for p in r.dir.rglob("*") if ".tmp-" in p.name]


def test_nothing_runs_for_an_unreadable_graph(tmp_path: Path, omg) -> None:
    g = write_graph(tmp_path, "name: [unclosed\n")
    r = omg_run(omg, g)
    assert r.code == 3, r.explain()
    assert "Traceback" not in r.err
    assert not r.dir.exists()


def test_a_run_id_cannot_be_reused(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: once
        nodes:
          - {id: a, run: echo a}
    """,
    )
    first = omg_run(omg, g, run_id="same")
    assert first.code == 0, first.explain()
    again = omg_run(omg, g, run_id="same")
    assert again.code == 3, again.explain()
    assert "already exists" in again.err
    state = run_dir_check(first.dir)
    assert len(state["legs"]) == 1


def test_events_show_launches_in_scheduling_order(tmp_path: Path, omg, run_dir_check) -> None:
    # `lane` is declared first but is slower to prepare (its git worktree is created before it
    # starts); `quick` is ready at the same moment. The stream must still say lane, then quick.

    sig = pygit2.Signature("Test User", "test@example.com")
    repo = pygit2.init_repository(str(tmp_path), initial_head="main")
    (tmp_path / "README").write_text("x\n")
    repo.index.add("README")
    repo.index.write()
    repo.create_commit("HEAD", sig, sig, "initial", repo.index.write_tree(), [])
    g = write_graph(
        tmp_path,
        """
        name: prepare
        concurrency: 4
        nodes:
          - {id: first, run: echo first}
          - {id: lane, depends_on: [first], worktree: lane, run: echo lane}
          - {id: quick, depends_on: [first], run: echo quick}
          - {id: quick2, depends_on: [first], run: echo quick2}
    """,
    )
    for k in range(3):
        r = omg("run", str(g), "--run-id", f"p{k}", cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        rd = tmp_path / ".omg" / "runs" / f"p{k}"
        run_dir_check(rd)
        assert started_order(events(rd)) == ["first", "lane", "quick", "quick2"], k
