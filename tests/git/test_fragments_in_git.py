"""A graph spliced from a fragment runs in git: its namespaced ids through a feedback round,
the loop's gate, the lane, the run branch and a resume on a fresh clone."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2

from omg.git.names import fanout_ref
from omg.graph.load import check_file
from omg.matrix import entries

GRAPH = """\
name: spliced
nodes:
  - id: loop
    use: twice
    worktree: lane
    with: {rounds: 1}
  - id: after
    depends_on: [loop]
    run: cat {{ artifacts.loop }} && wc -l < work.txt
    worktree: lane
"""
FRAGMENT = """\
fragment: twice
description: write a line, judge the count; the judge wants three lines.
substitutions: [rounds]
exit: judge
nodes:
  - id: write
    run: echo line >> work.txt && echo wrote
  - id: judge
    depends_on: [write]
    run: |
      n=$(wc -l < work.txt)
      if [ "$n" -ge 3 ]; then echo "SHIP IT: $n"; else echo "FIX: only $n"; exit 1; fi
    feedback: {rerun: write, max: "{{ with.rounds }}", on_exhausted: gate}
"""
SIG = pygit2.Signature("Test User", "test@example.com")


def _origin(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "work"
    repo = pygit2.init_repository(str(work), initial_head="main")
    (work / "graph.yaml").write_text(GRAPH)
    (work / "graphs" / "fragments").mkdir(parents=True)
    (work / "graphs" / "fragments" / "twice.yaml").write_text(FRAGMENT)
    for name in ("graph.yaml", "graphs/fragments/twice.yaml"):
        repo.index.add(name)
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "initial", repo.index.write_tree(), [])
    bare = tmp_path / "origin.git"
    pygit2.init_repository(str(bare), bare=True)
    repo.remotes.create("origin", bare.as_uri()).push(["refs/heads/main:refs/heads/main"])
    return work, bare


def test_a_spliced_loop_pauses_at_its_gate_and_a_fresh_clone_resumes_it(omg, tmp_path):
    work, bare = _origin(tmp_path)
    res = omg("run", "graph.yaml", "--run-id", "f1", "--push", "origin", cwd=work)
    assert res.returncode == 4, res.stdout + res.stderr
    assert 'fragment: node "loop" uses twice (graphs/fragments/twice.yaml)' in res.stderr
    state = json.loads((work / ".omg/runs/f1/state.json").read_text())
    assert state["nodes"]["loop/judge"]["round"] == 1  # one feedback round ran
    assert state["nodes"]["loop/judge"]["awaiting"] == "loop/judge.exhausted"  # the gate
    # the snapshot is the resolved graph, with the hash of every file it was spliced from
    assert [n["id"] for n in state["graph"]["nodes"]] == ["loop/write", "loop/judge", "after"]
    (sha,) = state["graph"]["resolved_from"].values()
    assert list(state["graph"]["resolved_from"]) == ["graphs/fragments/twice.yaml"]
    assert len(sha) == 64
    # the run branch holds the namespaced ids in their on-disk form
    remote = pygit2.Repository(str(bare))
    tip = remote.revparse_single("refs/heads/omg/runs/f1")
    files = {e.name for e in tip.tree["artifacts"]}  # type: ignore[union-attr]
    assert {"loop+write.out"} <= files and not any("/" in f for f in files)
    assert "loop+judge.out" in {e.name for e in tip.tree["feedback"]}  # type: ignore[union-attr]
    assert "refs/heads/omg/work/f1/lane" in list(remote.references)

    clone = tmp_path / "clone"
    pygit2.clone_repository(bare.as_uri(), str(clone), checkout_branch="main")
    # the fragment changes after the run started: the resume keeps the snapshot, and says so
    (clone / "graphs" / "fragments" / "twice.yaml").write_text(FRAGMENT.replace("three", "3"))
    res = omg(
        "resume", "f1", "--fetch", "origin", "--approve", "loop/judge.exhausted", "--push",
        "origin", cwd=clone,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert "fragment graphs/fragments/twice.yaml has changed since this run started" in res.stderr
    state = json.loads((clone / ".omg/runs/f1/state.json").read_text())
    assert state["status"] == "passed"
    after = (clone / ".omg/runs/f1/artifacts/after.out").read_text()
    assert after.endswith("2\n")  # after ran in the restored lane, behind the loop's exit


def test_namespaced_ids_plan_as_matrix_entries_with_refs_git_accepts(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "graphs" / "fragments").mkdir(parents=True)
    (tmp_path / "graphs" / "fragments" / "twice.yaml").write_text(FRAGMENT)
    (tmp_path / "g.yaml").write_text(
        "name: wide\nnodes:\n"
        "  - {id: a, use: twice, with: {rounds: 1}}\n"
        "  - {id: b, use: twice, with: {rounds: 1}}\n"
    )
    graph, found = check_file(tmp_path / "g.yaml")
    assert graph is not None, found
    planned = entries(graph, {})
    assert [e.node for e in planned] == ["a/write", "b/write"]
    refs = [fanout_ref("r1", e.node) for e in planned]
    assert refs == ["refs/omg/fanout/r1/a+write", "refs/omg/fanout/r1/b+write"]
    assert all(pygit2.reference_is_valid_name(r) for r in refs)
