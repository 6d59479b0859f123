"""The graphs in graphs/: they lint clean, the demo runs anywhere, review-loop rehearses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pygit2
from kit import ScriptedClaude, of, omg_run

GRAPHS = Path(__file__).resolve().parents[2] / "graphs"
SIG = pygit2.Signature("Test User", "test@example.com")


def test_the_shipped_graphs_lint_without_errors(omg) -> None:
    r = omg("lint", str(GRAPHS), "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert '"severity": "error"' not in r.stdout


def test_the_demo_shows_a_retry_and_a_loop_converging_in_round_two(
    tmp_path: Path, omg, run_dir_check
) -> None:
    graph = tmp_path / "demo.yaml"
    shutil.copy(GRAPHS / "demo.yaml", graph)
    shutil.copytree(GRAPHS / "fragments", tmp_path / "graphs" / "fragments")
    before = sorted(p.name for p in tmp_path.iterdir())
    runs = []
    for rid in ("first", "second"):  # twice from the same directory: fresh run ids, same story
        r = omg_run(omg, graph, run_id=rid, timeout=60)
        assert r.code == 0, r.explain()
        runs.append(r)
    for r in runs:
        state = run_dir_check(r.dir)
        nodes = state["nodes"]
        assert nodes["fetch"]["detail"] == "passed after 1 retry"
        assert (nodes["greet/judge"]["verdict"], nodes["greet/judge"]["round"]) == ("PASS", 2)
        assert state["hops"] == 2
        fired = of(r.events(), "node_retried", "greet/judge")
        assert [e["detail"] for e in fired] == [
            "feedback round 1/3: re-running greet/fix → greet/judge",
            "feedback round 2/3: re-running greet/fix → greet/judge",
        ]
        assert r.artifact("greet+judge") == "SHIP IT: Hello, world!\n"
        assert 'node "greet" uses fix-until-clean' in r.err
        assert "TOTAL COST" in r.out
    # it wrote nothing beside the graph but the runs and its lanes under .omg/
    after = sorted(p.name for p in tmp_path.iterdir())
    assert sorted(set(after) - set(before)) == [".omg", "runs"]
    assert sorted(p.name for p in (tmp_path / ".omg").iterdir()) == [".gitignore", "worktrees"]


def _repo(path: Path) -> None:
    repo = pygit2.init_repository(str(path), initial_head="main")
    (path / "Makefile").write_text("test:\n\t@test -f feature.txt && echo '1 passed'\n")
    (path / "README").write_text("a project\n")
    shutil.copy(GRAPHS / "review-loop.yaml", path / "review-loop.yaml")
    frag = "graphs/fragments/implement-review.yaml"
    (path / frag).parent.mkdir(parents=True)
    shutil.copy(GRAPHS / "fragments" / "implement-review.yaml", path / frag)
    for name in ("Makefile", "README", "review-loop.yaml", frag):
        repo.index.add(name)
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "initial", repo.index.write_tree(), [])


def test_review_loop_rehearses_with_a_scripted_claude(
    tmp_path: Path, omg, run_dir_check, claude: ScriptedClaude
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    _repo(work)
    # impl, review (findings), impl (writes the missing file), review (ship it); the suite
    # only passes once feature.txt exists, so review's verify is what the PASS rests on
    missing = {"file": "feature.txt", "line": None, "severity": "blocker", "problem": "missing"}
    claude.replies(
        [
            {"result": "DONE: first attempt", "cost": 0.5},
            {"structured": {"verdict": "fix", "findings": [missing]}, "cost": 0.25},
            {
                "result": "DONE: added feature.txt",
                "cost": 0.5,
                "write": {"feature.txt": "the feature\n"},
            },
            {"structured": {"verdict": "ship", "findings": []}, "cost": 0.25},
        ]
    )
    env = claude.env(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    r = omg(
        "run", "review-loop.yaml", "-i", "task=add feature.txt", "--run-id", "rl", cwd=work, env=env
    )
    assert r.returncode == 0, r.stdout + r.stderr
    state = run_dir_check(work / ".omg" / "runs" / "rl")
    nodes = state["nodes"]
    review = nodes["change/review"]
    assert (review["verdict"], review["provenance"], review["round"]) == ("PASS", "verified", 1)
    assert nodes["change/base"]["attempts"] == 1
    assert state["cost_usd"] == 1.5

    prompts = claude.prompts()
    assert len(prompts) == 4
    assert "<review>\n\n</review>" in prompts[0]
    sent = prompts[2].split("<review>\n", 1)[1].split("\n</review>", 1)[0]
    assert json.loads(sent) == [missing]  # the findings as data, not the prose
    assert "--json-schema" in claude.calls()[1]["argv"]
    base = (work / ".omg" / "runs" / "rl" / "artifacts" / "change+base.out").read_text()
    assert len(base) == 40
    assert f"`git diff {base}`" in prompts[1]
    assert "make test exited 2" in prompts[1]  # round 0: the suite was red
    assert "make test exited 0" in prompts[3]
    lanes = {Path(c["cwd"]).name for c in claude.calls()}
    assert lanes == {"lane"}
    # the user's checkout is untouched: the work happened in the lane
    assert not (work / "feature.txt").exists()
