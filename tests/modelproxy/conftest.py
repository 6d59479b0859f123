"""The proxy between the real pinned CLIs and the stub model: canary keys, one stand-in per
module (its script swapped per test), and the CLIs run as omg runs them, given only the
proxy's URL and a placeholder key."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from canaries import canary
from kit import clean_env

from omg.modelproxy import ModelProxy, Upstream
from omg.modelproxy.executions import Grant
from omg.stubmodel import StubModel
from tests.claude.conftest import CLAUDE, claude_bin
from tests.codex.conftest import CODEX, codex_bin, repo, script, stub

#: The pinned CLIs' fixtures (checked once a session), the stand-in's (one per module), a
#: repository's.
__all__ = ["claude_bin", "codex_bin", "repo", "script", "stub"]

#: omg's real keys in these tests: canaries, searched for in everything the proxy returns or
#: records and in everything the CLIs and their tools could see.
ANTHROPIC_KEY = canary("antkey")
OPENAI_KEY = canary("oaikey")
#: Quiet, offline claude (as a rehearsal runs it).
OFFLINE = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@pytest.fixture
def proxy(stub: StubModel) -> Iterator[ModelProxy]:
    """The proxy, forwarding /anthropic to the stub's Messages API and /openai to its
    Responses API, with the canary keys."""
    ups = {
        "anthropic": Upstream("messages", stub.url, ANTHROPIC_KEY),
        "openai": Upstream("responses", f"{stub.url}/v1", OPENAI_KEY),
    }
    with ModelProxy(ups) as served:
        yield served


@dataclass(frozen=True)
class Ran:
    """One CLI run: its exit, its output lines, and what it printed."""

    code: int
    stdout: str
    stderr: str

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.stdout.splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict):
                out.append(ev)
        return out

    def result(self) -> dict[str, Any]:
        """claude's result envelope (the last stream-json line)."""
        found = [e for e in self.events() if e.get("type") == "result"]
        assert found, self.stdout[-2000:] + self.stderr[-2000:]
        return found[-1]


def _env(home: Path, **extra: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return clean_env(HOME=str(home), **extra)


def run_claude(grant: Grant, cwd: Path, prompt: str = "go", *args: str, oauth: bool = False) -> Ran:
    """claude as omg runs it (``-p --output-format stream-json --verbose``, the room's settings
    alone, the prompt on stdin), given the proxy's URL and the grant's placeholder as its
    key (``oauth``: as its OAuth token)."""
    home = cwd.parent / "claude-home"
    key = "CLAUDE_CODE_OAUTH_TOKEN" if oauth else "ANTHROPIC_API_KEY"
    env = _env(home, ANTHROPIC_BASE_URL=grant.base_url, CLAUDE_CONFIG_DIR=str(home / "cfg"))
    env.update(OFFLINE)
    env[key] = grant.placeholder
    argv = [str(CLAUDE), "-p", "--output-format", "stream-json", "--verbose"]
    argv += ["--setting-sources", "user", "--strict-mcp-config", *args]
    done = subprocess.run(
        argv, input=prompt, cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def run_codex(grant: Grant, cwd: Path, prompt: str = "go", *args: str) -> Ran:
    """codex as omg runs it: omg's provider pointed at the grant's URL (``base_url``, the key
    from OPENAI_API_KEY, one retry), ``exec --json`` in a workspace-write sandbox, the keys
    kept out of its commands, no user configuration, the prompt on stdin."""
    home = cwd.parent / "codex-home"
    (home / "codex").mkdir(parents=True, exist_ok=True)
    env = _env(home, CODEX_HOME=str(home / "codex"), OPENAI_API_KEY=grant.placeholder)
    provider = "model_providers.omg"
    argv = [str(CODEX), "-c", 'model_provider="omg"', "-c", f'{provider}.name="omg"']
    argv += ["-c", f"{provider}.base_url={json.dumps(grant.base_url)}"]
    argv += ["-c", f'{provider}.wire_api="responses"', "-c", f'{provider}.env_key="OPENAI_API_KEY"']
    argv += ["-c", f"{provider}.request_max_retries=1", "-c", f"{provider}.stream_max_retries=1"]
    argv += ["exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write"]
    argv += ["-c", 'approval_policy="never"']
    argv += ["-c", 'shell_environment_policy.exclude=["OPENAI_API_KEY", "CODEX_API_KEY"]']
    argv += ["--ignore-user-config", "--strict-config", *args, "-"]
    done = subprocess.run(
        argv, input=prompt, cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    return Ran(done.returncode, done.stdout, done.stderr)
