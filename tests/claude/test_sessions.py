"""Sessions with the real CLI: a handoff forks its parent's session (siblings never share one)
within a leg and across legs on a fresh machine; a retry starts a fresh session."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from kit import omg_in_process, rooms_left

from .conftest import Env, git_repo

HANDOFF = """\
name: g
nodes:
  - id: a
    prompt: first task, remember the word heron
    worktree: lane
  - id: b
    depends_on: [a]
    handoff: session
    prompt: continue with the second task
    worktree: lane
  - id: c
    depends_on: [a]
    handoff: session
    prompt: and a third, on its own
    worktree: lane
"""

SCRIPT = """\
rules:
  - name: a answers
    when: {node: a}
    reply: "noted: heron"
  - name: a child that sees its parent's conversation
    when: {prompt: "remember the word heron"}
    reply: "I remember heron"
  - name: a child without its parent
    reply: "no memory of the parent"
"""


def omg(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return omg_in_process(*args, cwd=cwd, env=env)  # the CLI under test is claude's


def state(repo: Path, rid: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((repo / ".omg" / "runs" / rid / "state.json").read_text())
    return data


def test_siblings_fork_the_parents_session_and_each_sees_only_its_own(repo: Path, env: Env) -> None:
    (repo / "g.yaml").write_text(HANDOFF)
    (repo / "s.yaml").write_text(SCRIPT)
    done = omg(repo, env(), "run", "g.yaml", "--run-id", "h", "--rehearse", "s.yaml")
    assert done.returncode == 0, done.stderr
    st = state(repo, "h")
    sessions = {n: st["nodes"][n]["session_id"] for n in "abc"}
    assert len(set(sessions.values())) == 3  # forked: three sessions, none shared
    for child in "bc":
        assert (repo / ".omg" / "runs" / "h" / "artifacts" / f"{child}.out").read_text() == (
            "I remember heron"
        )
    kept = repo / ".omg" / "runs" / "h" / "sessions"
    assert {p.stem for p in kept.glob("*.jsonl")} == set(sessions.values())
    # each child is priced by its own turn, not by the parent's session it resumed
    assert st["nodes"]["b"]["cost_usd"] < st["nodes"]["b"]["session_cost_usd"]


def test_a_session_handoff_survives_a_fresh_clone_and_a_fresh_home(
    tmp_path: Path, env: Env
) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    work = git_repo(tmp_path / "work")
    (work / "g.yaml").write_text(HANDOFF)
    (work / "s.yaml").write_text(SCRIPT)
    git_env = {**env(), "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["add", "."], ["commit", "-qm", "graph"], ["remote", "add", "origin", str(origin)],
                 ["push", "-q", "origin", "main"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=work, env=git_env, check=True)
    first = omg(work, env(), "run", "g.yaml", "--run-id", "x", "--rehearse", "s.yaml",
                "--max-nodes", "1", "--push", "origin")  # fmt: skip
    assert first.returncode == 4, first.stderr  # paused for its leg budget: a ran, b and c wait
    # a new machine: the checkout is gone, the same path is cloned again, HOME is new
    shutil.rmtree(work)
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True)
    fresh_home = tmp_path / "home-2"
    second = omg(work, env(HOME=str(fresh_home)), "resume", "x", "--fetch", "origin",
                 "--rehearse", "s.yaml", "--push", "origin")  # fmt: skip
    assert second.returncode == 0, second.stderr + second.stdout
    for child in "bc":
        reply = (work / ".omg" / "runs" / "x" / "artifacts" / f"{child}.out").read_text()
        assert reply == "I remember heron", f"{child} lost its parent's session: {reply}"


def test_a_retry_starts_a_fresh_session_and_quotes_the_attempt(repo: Path, env: Env) -> None:
    graph = (
        "name: g\nnodes:\n  - id: a\n    prompt: write the word\n"
        "    success_check: {result_matches: '^DONE'}\n    retry: {max: 1, on: [result_mismatch]}\n"
    )
    script = """\
rules:
  - name: first try misses
    when: {attempt: 1}
    reply: "not yet"
  - name: the retry sees what it repeats
    when: {attempt: 2, prompt: "not yet"}
    reply: "DONE after seeing my first try"
"""
    (repo / "g.yaml").write_text(graph)
    (repo / "s.yaml").write_text(script)
    done = omg(repo, env(), "run", "g.yaml", "--run-id", "t", "--rehearse", "s.yaml")
    assert done.returncode == 0, done.stderr + done.stdout
    evs = [json.loads(x) for x in (repo / ".omg/runs/t/events.jsonl").read_text().splitlines()]
    [retried] = [e for e in evs if e["event"] == "node_retried"]
    [passed] = [e for e in evs if e["event"] == "node_passed"]
    assert retried["session_id"] == passed["session_id"] != evs[1]["session_id"]


ACROSS_CWD = """\
name: g
nodes:
  - id: a
    prompt: first task, remember the word heron
  - id: b
    depends_on: [a]
    handoff: session
    cwd: sub
    prompt: continue in the subdirectory
"""


def test_a_handoff_into_another_cwd_resumes_the_parent_from_its_kept_transcript(
    repo: Path, env: Env
) -> None:
    """claude 2.1.x resumes a session made in another directory; omg restores the kept
    transcript where the child looks, in the child's own room (the parent's went with it)."""
    (repo / "sub").mkdir()
    (repo / "sub" / "keep").write_text("")
    (repo / "g.yaml").write_text(ACROSS_CWD)
    (repo / "s.yaml").write_text(SCRIPT)
    first = omg(repo, env(), "run", "g.yaml", "--run-id", "w", "--rehearse", "s.yaml",
                "--max-nodes", "1")  # fmt: skip
    assert first.returncode == 4, first.stderr
    assert list((repo / ".omg" / "runs" / "w" / "sessions").glob("*.jsonl"))
    assert rooms_left(repo / ".omg" / "runs" / "w", env()) == []  # a's transcript: kept only
    second = omg(repo, env(), "resume", "w", "--rehearse", "s.yaml")
    assert second.returncode == 0, second.stderr + second.stdout
    reply = (repo / ".omg" / "runs" / "w" / "artifacts" / "b.out").read_text()
    assert reply == "I remember heron"
