"""The model key stays in omg with codex too: a leg runs the real codex CLI through omg's
model proxy (its provider's base_url, since codex ignores OPENAI_BASE_URL). Neither codex's
environment block and argv nor its commands' nor a shell node's hold the real key; the
model API gets it, and the proxy's priced record goes on the execution's event."""

from __future__ import annotations

from pathlib import Path

from canaries import Search, canary
from kit import run_graph

from omg.stubmodel import StubModel

from .conftest import runners, script

#: Every ancestor's environment block and argv (codex's own among them: unsandboxed).
ANCESTORS = (
    'p=$PPID; while [ "$p" -gt 1 ]; do '
    "echo \"== $p\"; tr '\\0' '\\n' < /proc/$p/environ; tr '\\0' ' ' < /proc/$p/cmdline; echo; "
    "p=$(awk '{print $4}' /proc/$p/stat); done"
)
GRAPH = """\
name: g
prices: {default: {input: 1.25, cached_input: 0.125, output: 10}}
nodes:
  - id: shell
    env: [OPENAI_API_KEY, CODEX_API_KEY, OUT]
    run: env > "$OUT/shell-env"
  - id: a
    runtime: codex
    permission_mode: bypassPermissions
    env: [OUT]
    prompt: look around
"""


def test_no_environment_or_argv_of_codex_or_a_node_holds_the_real_key(
    stub: StubModel, env, repo: Path, codex_bin: str, tmp_path: Path
) -> None:
    key, other = canary("oaikey"), canary("cdxkey")
    out = tmp_path / "seen"
    out.mkdir()
    command = f'env > "$OUT/codex-env"; {ANCESTORS} > "$OUT/codex-ancestors"'
    script(stub, {"name": "dump", "turns": [
        {"tool": "exec_command", "input": {"cmd": command},
         "usage": {"input_tokens": 1000, "cached_tokens": 400, "output_tokens": 100}},
        {"text": "DONE"},
    ]})  # fmt: skip
    given = env(OPENAI_API_KEY=key, CODEX_API_KEY=other, OUT=str(out))
    ran = run_graph(repo, GRAPH, parent_env=given, runners=runners(codex_bin))
    assert ran.outcome == "passed", ran.events()

    auth = [v for s in stub.seen for k, v in s.headers if k.lower() == "authorization"]
    assert auth == [f"Bearer {key}"] * 2  # the model API got omg's key, through the proxy
    ancestors = (out / "codex-ancestors").read_text()
    assert "OPENAI_API_KEY=omg-" in ancestors  # codex's own block: the placeholder
    assert 'model_providers.omg.base_url="http://127.0.0.1:' in ancestors  # its argv
    assert "OPENAI_API_KEY" not in (out / "shell-env").read_text()
    search = Search({"OPENAI_API_KEY": key, "CODEX_API_KEY": other})
    search.files(p for p in out.iterdir())
    search.tree(repo / "runs", "runs/")
    assert not search.leaks, search.report()

    done = next(e for e in ran.events() if e["event"] == "node_passed" and e["node_id"] == "a")
    proxy = done["proxy"]
    assert proxy["requests"] == 2 and proxy["unpriced"] == 0 and proxy["refused"] == 0
    assert proxy["usage"]["cached_input_tokens"] == 400
    assert abs(proxy["cost_usd"] - done["cost_usd"]) < 1e-9  # omg's count = codex's own
