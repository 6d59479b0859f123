"""The stand-in's Responses API as the real codex CLI meets it: both tool routes (code mode's
`exec`, and `exec_command` for a named model), rules matched on the runtime, kept rollouts
masked, and a handoff between runtimes refused at load."""

from __future__ import annotations

from pathlib import Path

from kit import run_graph

from omg.stubmodel.script import Request, build

from .conftest import runners, script

TOUCH = {"name": "t", "turns": [
    {"tool": "exec_command", "input": {"cmd": "printf 'ran\\n' > ran.txt"}},
    {"text": "touched"},
]}  # fmt: skip


def test_a_named_model_gets_function_tools_and_the_command_really_runs(
    stub, env, repo: Path, codex_bin: str
) -> None:
    script(stub, TOUCH)
    graph = "name: g\nnodes:\n  - {id: a, runtime: codex, model: house-model-1, prompt: go}\n"
    ran = run_graph(repo, graph, parent_env=env(), runners=runners(codex_bin))
    assert ran.outcome == "passed" and ran.artifact("a") == "touched"
    assert (repo / "ran.txt").read_text() == "ran\n"
    assert [s.request.turn for s in stub.seen] == [0, 1]


def test_rules_may_match_on_the_runtime() -> None:
    s = build({"rules": [
        {"name": "c", "when": {"runtime": "codex"}, "reply": "from codex"},
        {"name": "any", "reply": "else"},
    ]}, "s")  # fmt: skip

    def req(runtime: str) -> Request:
        return Request("n", 0, 1, "p", 0, 1, runtime=runtime)

    assert s.match(req("codex")).name == "c"  # type: ignore[union-attr]
    assert s.match(req("claude")).name == "any"  # type: ignore[union-attr]


def test_a_kept_rollout_has_the_keys_value_masked(stub, env, repo: Path, codex_bin: str) -> None:
    key = "sk-proj-secret-value-4242"
    script(stub, {"name": "r", "reply": "ok"})
    graph = f"name: g\nnodes:\n  - {{id: a, runtime: codex, prompt: 'the key is {key}'}}\n"
    ran = run_graph(repo, graph, parent_env=env(OPENAI_API_KEY=key), runners=runners(codex_bin))
    kept = list((ran.dir / "sessions").glob("*.jsonl"))
    assert ran.outcome == "passed" and len(kept) == 1
    text = kept[0].read_text()
    assert key not in text and "the key is" in text


def test_a_session_handoff_between_claude_and_codex_is_refused_at_load(repo: Path) -> None:
    graph = (
        "name: g\nnodes:\n  - {id: a, prompt: p}\n"
        "  - {id: b, runtime: codex, prompt: q, depends_on: [a], handoff: session}\n"
    )
    ran = run_graph(repo, graph)
    assert ran.error is not None
    assert "a codex session cannot resume it; use handoff: artifact" in str(ran.error)
