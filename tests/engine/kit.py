"""Helpers for the end-to-end engine tests: graphs, run directories, a scripted claude."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kit

OmgRunner = Callable[..., subprocess.CompletedProcess[str]]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without CI secrets or omg settings, plus ``extra``."""
    return kit.clean_env(**extra)


def write_graph(where: Path, text: str, name: str = "graph.yaml") -> Path:
    """Write a graph file (dedented) and return its path."""
    path = where / name
    path.write_text(textwrap.dedent(text))
    return path


def events(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def of(
    evs: Sequence[dict[str, Any]], event: str, node_id: str | None = None
) -> list[dict[str, Any]]:
    """The events of one type, optionally about one node, in file order."""
    return [
        e for e in evs if e["event"] == event and (node_id is None or e.get("node_id") == node_id)
    ]


def started_order(evs: Sequence[dict[str, Any]]) -> list[str]:
    return [e["node_id"] for e in of(evs, "node_started")]


@dataclass
class Run:
    """A finished `omg run`: the process and its run directory."""

    proc: subprocess.CompletedProcess[str]
    dir: Path

    @property
    def code(self) -> int:
        return self.proc.returncode

    @property
    def out(self) -> str:
        return self.proc.stdout

    @property
    def err(self) -> str:
        return self.proc.stderr

    def events(self) -> list[dict[str, Any]]:
        return events(self.dir)

    def state(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.dir / "state.json").read_text())
        return loaded

    def artifact(self, node_id: str) -> str:
        return (self.dir / "artifacts" / f"{node_id}.out").read_text()

    def explain(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


def omg_run(
    omg: OmgRunner,
    graph: Path,
    *args: str,
    run_id: str = "r1",
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Run:
    """`omg run GRAPH --no-commit --runs-dir <dir>/runs --run-id ID ARGS…` in the graph's dir."""
    runs = graph.parent / "runs"
    proc = omg(
        "run",
        str(graph),
        "--no-commit",
        "--runs-dir",
        str(runs),
        "--run-id",
        run_id,
        *args,
        cwd=graph.parent,
        env=env,
        timeout=timeout,
    )
    return Run(proc, runs / run_id)


# -- a scripted stand-in for the claude CLI ---------------------------------------------------

STUB = '''\
#!{python}
"""A scripted claude: pops the next reply from replies.json, records what it was given."""
import json, os, sys, time
from pathlib import Path

here = Path({here!r})
argv = sys.argv[1:]
if argv == ["--version"]:
    print("{version} (Claude Code stand-in)")
    sys.exit(0)
calls = here / "calls.jsonl"
n = sum(1 for _ in calls.open()) if calls.exists() else 0
prompt = sys.stdin.read()  # omg hands claude the prompt on stdin
with calls.open("a") as fh:
    fh.write(json.dumps({{"argv": argv, "prompt": prompt, "cwd": os.getcwd(),
                         "env": dict(os.environ)}}) + "\\n")
replies = json.loads((here / "replies.json").read_text())
reply = replies[min(n, len(replies) - 1)]
if reply.get("sleep"):
    time.sleep(reply["sleep"])
for name, text in reply.get("write", {{}}).items():  # an "edit" in the node's cwd
    Path(name).write_text(text)
sid = argv[argv.index("--session-id") + 1] if "--session-id" in argv else (
    argv[argv.index("--resume") + 1] if "--resume" in argv else "no-session")
# like the real CLI, a resumed (or forked) session reports the whole session's cost
books = here / "sessions.json"
spent = json.loads(books.read_text()) if books.exists() else {{}}
parent = argv[argv.index("--resume") + 1] if "--resume" in argv else None
total = spent.get(parent, 0.0) + reply.get("cost", 0.01)
spent[sid] = total
books.write_text(json.dumps(spent))
envelope = {{
    "type": "result",
    "subtype": reply.get("subtype", "success"),
    "is_error": reply.get("is_error", False),
    "result": reply.get("result", "DONE"),
    "session_id": sid,
    "total_cost_usd": total,
    "usage": {{"input_tokens": 10, "output_tokens": 5}},
}}
print(json.dumps(envelope))
sys.exit(reply.get("exit", 0))
'''


class ScriptedClaude:
    """A `claude` executable that answers each call with the next scripted reply.

    A reply is a dict: ``result`` (text), ``cost`` (default 0.01), ``is_error``, ``subtype``,
    ``exit``, ``sleep``, ``write`` ({file: text} written in its cwd, like an edit). The last
    reply repeats once the script runs out.
    """

    def __init__(self, directory: Path, version: str = "2.1.332") -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.bin = self.dir / "claude"
        self.bin.write_text(STUB.format(python=sys.executable, here=str(self.dir), version=version))
        self.bin.chmod(0o755)
        self.replies([{"result": "DONE"}])

    def replies(self, replies: Sequence[dict[str, Any] | str]) -> None:
        items = [{"result": r} if isinstance(r, str) else dict(r) for r in replies]
        (self.dir / "replies.json").write_text(json.dumps(items))

    def calls(self) -> list[dict[str, Any]]:
        path = self.dir / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def prompts(self) -> list[str]:
        return [c["prompt"] for c in self.calls()]

    def env(self, **extra: str) -> dict[str, str]:
        """An environment for `omg` that points OMG_CLAUDE_BIN at this stub."""
        return clean_env(OMG_CLAUDE_BIN=str(self.bin), **extra)
