"""How a codex node ends when the API or the CLI does not answer as hoped: refused
credentials, a rate limit, an outage, a full context window, an empty answer, a hang, a
timeout — each a closed cause with a hint, and no process left behind."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kit import run_graph

from .conftest import runners, script


def one(stub, env, repo: Path, codex_bin: str, extra: str = "", **vars: str) -> dict:
    graph = f"name: g\nnodes:\n  - id: a\n    runtime: codex\n    prompt: do it\n{extra}"
    run_id = f"r{len(list((repo / 'runs').glob('*'))) if (repo / 'runs').exists() else 0}"
    ran = run_graph(repo, graph, parent_env=env(**vars), runners=runners(codex_bin), run_id=run_id)
    rec: dict = ran.state()["nodes"]["a"]
    return rec


def test_refused_credentials_fail_at_once_with_the_key_hint(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "no", "error": {"status": 401, "message": "Incorrect API key"}})
    rec = one(stub, env, repo, codex_bin)
    assert rec["verdict"] == "FAIL" and rec["cause"] == "run_error"
    assert "could not authenticate" in rec["detail"] and "OPENAI_API_KEY" in rec["detail"]
    assert len(stub.seen) <= 3  # stopped after two refusals, not codex's five reconnects


def test_a_missing_key_names_the_variable_to_set(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "any", "reply": "never asked"})
    rec = one(stub, env, repo, codex_bin, OPENAI_API_KEY="")
    assert rec["cause"] == "run_error" and "OPENAI_API_KEY" in rec["detail"]
    assert stub.seen == []


def test_an_outage_is_a_run_error_not_a_verdict(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "down", "error": {"status": 500}})
    rec = one(stub, env, repo, codex_bin)
    assert rec["cause"] == "run_error" and "not a verdict" in rec["detail"], rec["detail"]
    assert len(stub.seen) <= 4  # omg's provider retries once, not codex's thirty requests


LIMITS = [
    ({"status": 429, "retry_after": 0}, "rate", "429"),
    ({"status": 429, "limit": "session", "resets_in": 7200}, "session", "hit your usage limit"),
]


@pytest.mark.parametrize(("error", "kind", "said"), LIMITS)
def test_a_rate_or_usage_limit_pauses_the_run(
    stub, env, repo, codex_bin, error: dict, kind: str, said: str
) -> None:
    script(stub, {"name": "limited", "error": error})
    graph = "name: g\nnodes:\n  - {id: a, runtime: codex, prompt: do it}\n"
    ran = run_graph(repo, graph, parent_env=env(), runners=runners(codex_bin))
    state = ran.state()
    assert ran.outcome == "paused" and state["nodes"]["a"]["verdict"] == ""
    wait = state["legs"][-1]["wait"]
    assert wait["kind"] == kind and said in wait["said"].replace("\u2019", "'"), wait


def test_a_recovered_outage_passes(stub, env, repo, codex_bin) -> None:
    script(
        stub,
        {"name": "down once", "when": {"call": 1}, "error": {"status": 500, "retry_after": 0}},
        {"name": "up", "reply": "recovered"},
    )
    rec = one(stub, env, repo, codex_bin)
    assert rec["verdict"] == "PASS" and [s.status for s in stub.seen] == [500, 200]


def _retries(ran_dir: Path) -> list[tuple[str, object]]:
    """(event, api_retries) of every settled execution of node a."""
    from kit import read_events

    settled = ("node_passed", "node_failed", "node_retried")
    return [(e["event"], e.get("api_retries")) for e in read_events(ran_dir)
            if e["event"] in settled]  # fmt: skip


def test_api_retries_are_counted_when_the_node_passes(stub, env, repo, codex_bin) -> None:
    script(
        stub,
        {"name": "limited", "when": {"call": [1, 3]}, "error": {"status": 429, "retry_after": 0}},
        {"name": "works", "turns": [
            {"tool": "exec_command", "input": {"cmd": "echo hi"}}, {"text": "DONE"}]},
    )  # fmt: skip
    graph = "name: g\nnodes:\n  - {id: a, runtime: codex, prompt: do it}\n"
    ran = run_graph(repo, graph, parent_env=env(), runners=runners(codex_bin))
    assert [s.status for s in stub.seen] == [429, 200, 429, 200]
    assert _retries(ran.dir) == [("node_passed", 2)]  # codex's two reconnects, as claude's are


def test_api_retries_are_counted_when_an_outage_fails_the_node(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "down", "error": {"status": 500, "retry_after": 0}})
    graph = "name: g\nnodes:\n  - {id: a, runtime: codex, prompt: do it}\n"
    ran = run_graph(repo, graph, parent_env=env(), runners=runners(codex_bin))
    assert ran.state()["nodes"]["a"]["cause"] == "run_error"
    assert _retries(ran.dir) == [("node_failed", 1)]


def test_a_full_context_window_says_so(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "full", "error": {"status": 400, "message": "context_length_exceeded"}})
    rec = one(stub, env, repo, codex_bin)
    assert rec["cause"] == "run_error" and "context window" in rec["detail"], rec["detail"]


def test_an_empty_answer_is_an_output_error(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "nothing", "empty": True})
    rec = one(stub, env, repo, codex_bin)
    assert rec["cause"] == "output_error" and "without answering" in rec["detail"]


def test_an_unknown_models_metadata_note_does_not_fail_the_node(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "ok", "reply": "fine"})
    rec = one(stub, env, repo, codex_bin, "    model: house-model-1\n")
    assert rec["verdict"] == "PASS", rec.get("detail")


def test_a_hang_is_caught_by_the_watchdog(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "hangs", "hang": 30, "reply": "late"})
    rec = one(stub, env, repo, codex_bin, "    idle_timeout: 2s\n    timeout: 1m\n")
    assert rec["cause"] == "idle_timeout" and "stuck: no output" in rec["detail"]


def test_a_timeout_leaves_no_process_behind(stub, env, repo, codex_bin, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    cmd = f"sh -c 'echo $$ > {pidfile}; exec sleep 120' & wait"
    script(stub, {"name": "busy", "turns": [{"tool": "exec_command", "input": {"cmd": cmd}}]})
    extra = "    permission_mode: bypassPermissions\n    timeout: 4s\n"
    rec = one(stub, env, repo, codex_bin, extra)
    assert rec["cause"] == "timeout" and "every process it started were stopped" in rec["detail"]
    pid = int(pidfile.read_text())
    for _ in range(50):  # SIGKILLed: gone once the kernel reaps it
        if not Path(f"/proc/{pid}").exists() or "Z" in _state(pid):
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)
    assert _in(repo) == [], "codex, codex-code-mode-host or a tool outlived the node"


def _in(repo: Path) -> list[str]:
    """The live processes whose working directory is ``repo``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            here = proc.name.isdigit() and Path(proc, "cwd").resolve() == repo.resolve()
            if here and _state(int(proc.name)) != "Z":
                found.append(Path(proc, "cmdline").read_text().replace("\0", " "))
        except OSError:
            continue
    return found


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1]
    except OSError:
        return "Z"


def test_three_codex_nodes_run_in_parallel(stub, env, repo, codex_bin) -> None:
    script(stub, {"name": "any", "reply": "done"})
    nodes = "".join(f"  - {{id: n{i}, runtime: codex, prompt: task {i}}}\n" for i in range(3))
    ran = run_graph(
        repo,
        f"name: g\nconcurrency: 3\nnodes:\n{nodes}",
        parent_env=env(),
        runners=runners(codex_bin),
    )
    recs = ran.state()["nodes"]
    assert ran.outcome == "passed" and {r["verdict"] for r in recs.values()} == {"PASS"}
    assert len({r["session_id"] for r in recs.values()}) == 3
