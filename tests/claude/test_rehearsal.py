"""`--rehearse`: the shipped review loop runs for real — worktree, suite, feedback round —
with the real claude CLI answering from a script, and its costs marked rehearsed."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from kit import omg_in_process, rooms_left

from .conftest import ROOT, Env

TASK = "add hello.sh printing 'hello, world'"
GATED = """\
name: g
nodes:
  - {id: a, prompt: go}
  - {id: ok, type: gate, depends_on: [a]}
  - {id: b, prompt: again, depends_on: [ok]}
"""


def omg(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return omg_in_process(*args, cwd=repo, env=env)  # the CLI under test is claude's


def events(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]


def test_the_review_loop_rehearsal_finds_a_defect_fixes_it_and_ships(repo: Path, env: Env) -> None:
    done = omg(
        repo, env(), "run", str(ROOT / "graphs" / "review-loop.yaml"), "-i", f"task={TASK}",
        "--run-id", "rh", "--rehearse", str(ROOT / "graphs" / "rehearsals" / "review-loop.yaml"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    run = repo / ".omg" / "runs" / "rh"
    state = json.loads((run / "state.json").read_text())
    assert state["rehearsal"] is True and state["status"] == "passed"
    assert (
        state["nodes"]["change/review"]["round"] == 1
        and state["nodes"]["change/review"]["provenance"] == "verified"
    )
    fired = [e for e in events(run) if e["event"] == "node_retried" and e["reason"] == "feedback"]
    assert [e["node_id"] for e in fired] == ["change/review"]
    feedback = (run / "feedback" / "change+review.out").read_text()
    assert 'prints "hello"' in feedback  # the reviewer's finding went back to impl
    lane = repo / ".omg" / "worktrees" / "rh" / "lane"
    assert (lane / "hello.sh").read_text() == "#!/bin/sh\necho 'hello, world'\n"  # the real Edit
    assert state["cost_usd"] > 0 and "rehearsed" in done.stdout and "nothing spent" in done.stdout
    # every agent step is auditable from the run directory: the implementer's two sessions
    shown = omg(repo, env(), "status", "rh", "--node", "change/impl")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("session ") >= 4  # two executions, two kept transcripts
    assert "→ Write hello.sh" in shown.stdout and "→ Edit hello.sh" in shown.stdout
    assert ".omg/runs/rh/sessions/" in shown.stdout


def test_a_rehearsal_never_reaches_the_real_home_or_credentials(
    repo: Path, env: Env, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    child = env(
        ANTHROPIC_API_KEY="sk-ant-real-looking-key", ANTHROPIC_BASE_URL="http://192.0.2.1:9"
    )
    script = tmp_path / "script.yaml"
    script.write_text('rules:\n  - name: any\n    reply: "env seen"\n')
    graph = tmp_path / "g.yaml"
    graph.write_text("name: g\nnodes:\n  - id: a\n    prompt: say it\n")
    done = omg(repo, child, "run", str(graph), "--run-id", "r", "--rehearse", str(script))
    assert done.returncode == 0, done.stderr + done.stdout
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()
    assert rooms_left(repo / ".omg" / "runs" / "r", child) == []  # its room went with it
    text = (repo / ".omg" / "runs" / "r" / "artifacts" / "a.out").read_text()
    assert text == "env seen"  # answered by the stand-in, not the unreachable address


def test_a_rehearsed_run_resumes_only_as_a_rehearsal(repo: Path, env: Env, tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("rules:\n  - name: any\n    reply: ok\n")
    graph = tmp_path / "g.yaml"
    graph.write_text(GATED)
    first = omg(repo, env(), "run", str(graph), "--run-id", "r", "--rehearse", str(script))
    assert first.returncode == 4, first.stderr
    real = omg(repo, env(), "resume", "r", "--approve", "ok")
    assert real.returncode == 2 and "is a rehearsal; resume it with --rehearse" in real.stderr
    again = omg(repo, env(), "resume", "r", "--approve", "ok", "--rehearse", str(script))
    assert again.returncode == 0, again.stderr


def test_the_fragments_pages_example_runs_as_written(repo: Path, env: Env) -> None:
    """docs/fragments.md: the fragment file and the graph using it, copied out of the page,
    run — the loop spliced in, the judge's reply reaching `report`."""
    page = (ROOT / "docs" / "fragments.md").read_text()
    for block in re.findall(r"```yaml\n(.*?)```", page, re.S):
        where = block.splitlines()[0].removeprefix("# ")
        (repo / where).parent.mkdir(parents=True, exist_ok=True)
        (repo / where).write_text(block)
    script = repo / "s.yaml"
    script.write_text(
        "rules:\n"
        "  - name: fix works towards the goal it was given\n"
        "    when: {node: tidy/fix, prompt: 'Work towards this goal: sort the imports'}\n"
        "    turns:\n"
        '      - {tool: Write, input: {file_path: NOTES, content: "sorted\\n"}}\n'
        "      - {text: DONE}\n"
        "  - name: the judge ships it\n"
        "    when: {node: tidy/judge}\n"
        "    reply: SHIP IT — the imports are sorted\n"
    )
    done = omg(repo, env(), "run", "graphs/tidy.yaml", "-i", "goal=sort the imports",
               "--run-id", "t", "--rehearse", str(script))  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "stand-in's default answer" not in done.stderr
    run = repo / ".omg" / "runs" / "t"
    assert (run / "artifacts" / "report.out").read_text() == "SHIP IT — the imports are sorted"
    assert (repo / ".omg" / "worktrees" / "t" / "lane" / "NOTES").read_text() == "sorted\n"
