"""codex threads across nodes and legs: a handoff forks the parent's thread in a fresh codex
home (its rollout travels with the run) and is counted by its delta; a retry starts a
fresh thread and quotes the attempt."""

from __future__ import annotations

from pathlib import Path

from kit import resume_graph, rooms_left, run_graph

from .conftest import runners, script

HANDOFF = """\
name: g
nodes:
  - {id: a, runtime: codex, prompt: remember the word PLUM}
  - {id: b, runtime: codex, prompt: say the word, depends_on: [a], handoff: session}
"""
USAGE = {"input_tokens": 100, "output_tokens": 20}


def test_a_session_handoff_resumes_across_legs_from_the_kept_rollout_alone(
    stub, env, repo: Path, codex_bin: str, tmp_path: Path
) -> None:
    script(
        stub,
        {"name": "a", "when": {"prompt": "PLUM"}, "turns": [{"text": "ok", "usage": USAGE}]},
        {"name": "b", "when": {"prompt": "say"}, "turns": [{"text": "PLUM", "usage": USAGE}]},
    )
    users_home = tmp_path / "users-codex-home"  # the user's CODEX_HOME: never codex's own
    first = run_graph(
        repo, HANDOFF, parent_env=env(CODEX_HOME=str(users_home)), runners=runners(codex_bin),
        max_nodes=1,
    )  # fmt: skip
    a = first.state()["nodes"]["a"]
    assert a["verdict"] == "PASS" and "b" not in first.state()["nodes"]
    assert (first.dir / "sessions" / f"{a['session_id']}.jsonl").exists()
    assert not users_home.exists() and rooms_left(first.dir, env()) == []  # a's room is gone
    second = resume_graph(
        repo, parent_env=env(CODEX_HOME=str(users_home)), runners=runners(codex_bin)
    )
    b = second.state()["nodes"]["b"]
    assert b["verdict"] == "PASS", b.get("detail")
    assert b["session_id"] != a["session_id"]  # forked: a sibling never shares a's thread
    assert b["usage"]["input_tokens"] == 100  # the delta, not the thread's cumulative 200
    assert b["usage"]["output_tokens"] == 20
    assert stub.seen[-1].request.prompt == "say the word"


def test_a_retry_starts_a_fresh_thread_and_quotes_the_attempt(
    stub, env, repo: Path, codex_bin: str
) -> None:
    script(
        stub,
        {"name": "second try", "when": {"prompt": "did NOT pass"}, "reply": "DONE"},
        {"name": "first try", "reply": "not yet"},
    )
    graph = (
        "name: g\nnodes:\n  - id: a\n    runtime: codex\n    prompt: do it\n"
        "    success_check: {result_matches: '^DONE'}\n    retry: {max: 1, on: [result_mismatch]}\n"
    )
    ran = run_graph(repo, graph, parent_env=env(), runners=runners(codex_bin))
    assert ran.error is None, ran.error
    assert ran.state()["nodes"]["a"]["verdict"] == "PASS"
    assert "not yet" in stub.seen[-1].request.prompt  # the attempt, quoted as data
    retried = next(e for e in ran.events() if e["event"] == "node_retried")
    passed = next(e for e in ran.events() if e["event"] == "node_passed")
    assert passed["session_id"] and passed["session_id"] != retried.get("session_id")
    kept = {p.stem for p in (ran.dir / "sessions").glob("*.jsonl")}
    assert len(kept) == 2  # two threads, each kept
