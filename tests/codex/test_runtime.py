"""A codex node with the real CLI: a real tool call, the reply, tokens, version, sessions."""

from __future__ import annotations

from pathlib import Path

from kit import run_graph

from .conftest import runners, script

WRITE = {"name": "w", "turns": [
    {"tool": "Write", "input": {"file_path": "out.txt", "content": "made by a tool\n"}},
    {"text": "written", "usage": {"input_tokens": 100, "output_tokens": 20}},
]}  # fmt: skip


def test_a_codex_node_writes_a_file_with_a_real_tool_call(
    stub, env, repo: Path, codex_bin: str
) -> None:
    script(stub, WRITE)
    ran = run_graph(
        repo,
        "name: g\nnodes:\n  - {id: a, runtime: codex, prompt: write it}\n",
        parent_env=env(),
        runners=runners(codex_bin),
    )
    assert ran.outcome == "passed", ran.events()
    assert (repo / "out.txt").read_text() == "made by a tool\n"
    assert ran.artifact("a") == "written"
    done = next(e for e in ran.events() if e["event"] == "node_passed")
    assert done["cli_version"] == "0.169.0"
    assert done["usage"]["output_tokens"] >= 20 and done.get("cost_unknown") is True
    assert [s.request.turn for s in stub.seen] == [0, 1]
