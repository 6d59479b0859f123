"""The model key stays in omg: a leg runs the real claude CLI through omg's model proxy. No
environment block or argv of a node — a shell node that names the key, the CLI itself, its
Bash tool — holds the real key, only the execution's placeholder; a placeholder of an
execution that finished opens nothing; and the proxy stops an execution at its spend cap's
room while the CLI's own --max-budget-usd is set far higher: a priced, recorded failure."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml
from canaries import Search, canary

from omg.stubmodel import StubModel, load

from .conftest import Env, git_repo
from .test_sessions import omg

#: Every ancestor's environment block and argv, from a command the agent's Bash tool runs:
#: the CLI's own among them (read as the same user, as a hostile build script would).
ANCESTORS = (
    'p=$PPID; while [ "$p" -gt 1 ]; do '
    "echo \"== $p\"; tr '\\0' '\\n' < /proc/$p/environ; tr '\\0' ' ' < /proc/$p/cmdline; echo; "
    "p=$(awk '{print $4}' /proc/$p/stat); done"
)
#: Sends the placeholder an earlier execution held to the proxy, as a node could.
REPLAY = (
    "python3 -c 'import os, sys, urllib.request as u\n"
    'key = open(sys.argv[1]).read().split("=", 1)[1].strip()\n'
    'r = u.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", data=b"{}", '
    'headers={"x-api-key": key, "content-type": "application/json"})\n'
    "try: print(u.urlopen(r).status)\n"
    'except Exception as e: print(e.code, e.read().decode())\' "$OUT/first-key"'
)

#: What the first execution runs: its environment, every ancestor's, its key kept apart.
LOOK = (
    f'env > "$OUT/first-env"; {ANCESTORS} > "$OUT/first-ancestors"; '
    'grep ^ANTHROPIC_API_KEY= "$OUT/first-env" > "$OUT/first-key"'
)
KEYS = """\
name: keys
on_fail: continue
nodes:
  - id: shell     # names every model key: gets none of them
    env: [ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, OUT]
    run: env > "$OUT/shell-env"
  - id: first
    env: [OUT]
    prompt: "first: look around"
    allowed_tools: [Bash]
  - id: second    # runs after first ended: first's placeholder opens nothing
    depends_on: [first]
    env: [OUT]
    prompt: "second: replay"
    allowed_tools: [Bash]
"""


def script(tmp: Path, *rules: dict[str, Any]) -> Path:
    path = tmp / "s.yaml"
    path.write_text(yaml.safe_dump({"rules": list(rules)}))
    return path


def events(repo: Path, rid: str) -> list[dict[str, Any]]:
    lines = (repo / ".omg" / "runs" / rid / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def ended(repo: Path, rid: str, node: str) -> dict[str, Any]:
    return [
        e
        for e in events(repo, rid)
        if e.get("node_id") == node and e["event"] in ("node_passed", "node_failed")
    ][-1]


def test_no_environment_or_argv_of_a_node_holds_the_real_key(
    tmp_path: Path, repo: Path, env: Env
) -> None:
    key, oauth = canary("antkey"), canary("oauth")
    out = tmp_path / "seen"
    out.mkdir()
    (repo / "g.yaml").write_text(KEYS)
    rules = script(
        tmp_path,
        {
            "name": "first dumps its environment and every ancestor's",
            "when": {"prompt": "first: look around"},
            "turns": [{"tool": "Bash", "input": {"command": LOOK}}, {"text": "DONE"}],
        },
        {
            "name": "second sends first's placeholder to the proxy",
            "when": {"prompt": "second: replay"},
            "turns": [
                {"tool": "Bash", "input": {"command": f'{REPLAY} > "$OUT/replayed" 2>&1'}},
                {"text": "DONE"},
            ],
        },
    )
    with StubModel(load(rules)).serve() as stub:
        given = env(
            ANTHROPIC_API_KEY=key,
            CLAUDE_CODE_OAUTH_TOKEN=oauth,
            ANTHROPIC_BASE_URL=stub.url,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            OUT=str(out),
        )
        done = omg(repo, given, "run", "g.yaml", "--run-id", "k")
        assert done.returncode == 0, done.stderr
        heard = [v for s in stub.seen for k, v in s.headers if k.lower() == "x-api-key"]
    assert heard and set(heard) == {key}  # the model API got omg's key, through the proxy

    first_env = (out / "first-env").read_text()
    placeholder = (out / "first-key").read_text().strip().split("=", 1)[1]
    assert placeholder.startswith("omg-") and len(placeholder) > 40
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:" in first_env
    assert "CLAUDE_CODE_OAUTH_TOKEN" not in first_env
    ancestors = (out / "first-ancestors").read_text()
    assert "claude" in ancestors and f"ANTHROPIC_API_KEY={placeholder}" in ancestors  # the CLI's
    shell_env = (out / "shell-env").read_text()
    assert "ANTHROPIC_API_KEY" not in shell_env and "CLAUDE_CODE_OAUTH_TOKEN" not in shell_env

    replayed = (out / "replayed").read_text()
    assert replayed.startswith("403") and "execution that has finished" in replayed, replayed

    search = Search({"ANTHROPIC_API_KEY": key, "CLAUDE_CODE_OAUTH_TOKEN": oauth})
    search.files(p for p in out.iterdir())
    search.tree(repo / ".omg", ".omg/")
    search.text("omg's output", done.stdout + done.stderr)
    assert not search.leaks, search.report()

    first = ended(repo, "k", "first")
    proxy = first["proxy"]
    assert proxy["requests"] == 2 and proxy["refused"] == 0 and not proxy["budget_exceeded"]
    assert proxy["usage"]["input_tokens"] > 0 and proxy["unpriced"] == 0
    assert abs(proxy["cost_usd"] - first["cost_usd"]) < 1e-9  # omg's count = the CLI's
    assert ended(repo, "k", "second")["proxy"]["requests"] == 2  # its own placeholder worked


CAPPED = """\
name: capped
budget_usd: 50
day_budget_usd: 0.01
nodes:
  - id: costly
    prompt: "spend: a lot"
    model: claude-opus-5-5
    allowed_tools: [Bash]
    env: [OUT]
"""


def test_the_proxy_stops_an_execution_at_its_cap_while_the_clis_own_cap_is_higher(
    tmp_path: Path, env: Env
) -> None:
    """The day's cap leaves $0.01; the run's budget gives the CLI --max-budget-usd 50. The
    first answer costs $0.024: the proxy refuses the second request, and the node fails with
    the proxy's refusal as its cause, its spend recorded."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    repo = git_repo(tmp_path / "work")
    subprocess.run(["git", "remote", "add", "origin", str(origin)], cwd=repo, check=True)
    (repo / "g.yaml").write_text(CAPPED)
    out = tmp_path / "seen"
    out.mkdir()
    turns = [
        {"tool": "Bash", "input": {"command": f'{ANCESTORS} > "$OUT/ancestors"'},
         "usage": {"input_tokens": 1000, "output_tokens": 1000}},
        {"text": "DONE"},
    ]  # fmt: skip
    rules = script(tmp_path, {"name": "costly", "when": {"prompt": "spend"}, "turns": turns})
    with StubModel(load(rules)).serve() as stub:
        given = env(
            ANTHROPIC_API_KEY=canary("antkey"),
            ANTHROPIC_BASE_URL=stub.url,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            OUT=str(out),
        )
        done = omg(repo, given, "run", "g.yaml", "--run-id", "c", "--push", "origin")
        assert len(stub.seen) == 1  # the second request never reached the model
    assert done.returncode == 1, done.stdout + done.stderr
    assert "--max-budget-usd 50" in (out / "ancestors").read_text()  # the CLI's own cap

    failed = ended(repo, "c", "costly")
    assert failed["cause"] == "budget_exceeded", failed
    assert "omg's model proxy" in failed["detail"] and "of the $0.0100" in failed["detail"]
    assert abs(failed["cost_usd"] - 0.024) < 1e-9  # priced and recorded
    proxy = failed["proxy"]
    assert proxy["budget_exceeded"] and proxy["refused"] == 1 and proxy["requests"] == 1
    assert proxy["refusals"][0]["why"] == "budget"
    status = omg(repo, given, "status", "c", "--node", "costly")
    assert "refused 1 request(s) (budget)" in status.stdout, status.stdout
