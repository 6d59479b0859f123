"""The real codex CLI (pinned in package.json, installed by `npm ci`) against the stub model's
Responses API: one stand-in server per module, its script swapped per test."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kit import clean_env

from omg.stubmodel import StubModel
from omg.stubmodel.script import build
from tests.claude.conftest import CLAUDE, git_repo

ROOT = Path(__file__).resolve().parents[2]
CODEX = ROOT / "node_modules" / ".bin" / "codex"
#: The one pin of the CLI's version, in package.json (npm ci installs it; the action too).
PINNED = json.loads((ROOT / "package.json").read_text())["devDependencies"]["@openai/codex"]


@pytest.fixture(scope="session")
def codex_bin() -> str:
    """The pinned CLI; a missing one fails the test (CI installs it), it is never skipped."""
    assert CODEX.exists(), f"{CODEX} is missing: run `npm ci` in the checkout"
    version = subprocess.run([str(CODEX), "--version"], capture_output=True, text=True)
    assert version.stdout.split()[-1] == PINNED, version.stdout + version.stderr
    return str(CODEX)


@pytest.fixture(scope="module")
def stub() -> Iterator[StubModel]:
    """One stand-in per module; each test sets its script with ``script(stub, …)``."""
    model = StubModel(build({"rules": []}, "none"))
    with model.serve():
        yield model


def script(stub: StubModel, *rules: dict[str, Any]) -> StubModel:
    """``stub`` answering from ``rules`` from now on, its log emptied."""
    stub.script = build({"rules": list(rules)}, "script")
    stub.seen.clear()
    stub._calls.clear()
    return stub


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo")


def codex_env(codex_bin: str, stub: StubModel, home: Path, **extra: str) -> dict[str, str]:
    """A clean environment pointing codex (and claude) at the stand-in, a HOME of its own."""
    from omg.runners.registry import rehearsal_env

    home.mkdir(parents=True, exist_ok=True)
    base = clean_env(HOME=str(home), OMG_CODEX_BIN=codex_bin, OMG_CLAUDE_BIN=str(CLAUDE))
    env = rehearsal_env(base, stub.url)
    env.update(extra)
    return env


@pytest.fixture
def env(codex_bin: str, stub: StubModel, tmp_path: Path) -> Any:
    def make(**extra: str) -> dict[str, str]:
        return codex_env(codex_bin, stub, tmp_path / "home", **extra)

    return make


def runners(codex_bin: str) -> dict[str, Any]:
    """The real runtimes, with the pinned CLIs (run_graph's runners=)."""
    from omg.runners.claude import ClaudeRunner
    from omg.runners.codex import CodexRunner

    return {"codex": CodexRunner(binary=codex_bin), "claude": ClaudeRunner(binary=str(CLAUDE))}
