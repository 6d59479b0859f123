"""The real claude CLI (pinned in package.json, installed by `npm ci`) against the stub model."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kit import clean_env

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "node_modules" / ".bin" / "claude"
#: The one pin of the CLI's version, in package.json (npm ci installs it; the action too).
PINNED = json.loads((ROOT / "package.json").read_text())["devDependencies"][
    "@anthropic-ai/claude-code"
]


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """The pinned CLI; a missing one fails the test (CI installs it), it is never skipped."""
    assert CLAUDE.exists(), f"{CLAUDE} is missing: run `npm ci` in the checkout"
    version = subprocess.run([str(CLAUDE), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith(PINNED), version.stdout + version.stderr
    return str(CLAUDE)


def git_repo(path: Path) -> Path:
    """A repository with one commit, made with the git CLI (as a user's would be): once per
    test process, then copied (five git processes a test otherwise)."""
    if not _TEMPLATE:
        made = Path(tempfile.mkdtemp(prefix="omg-test-repo-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        _TEMPLATE.append(_made_with_git(made / "repo"))
    shutil.copytree(_TEMPLATE[0], path, symlinks=True, dirs_exist_ok=True)
    return path


_TEMPLATE: list[Path] = []


def _made_with_git(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(path), "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "dev@example.com"],
        ["config", "user.name", "Dev"],
    ):
        subprocess.run(["git", *args], cwd=path, env=env, check=True)
    (path / "README.md").write_text("# project\n")
    subprocess.run(["git", "add", "."], cwd=path, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=path, env=env, check=True)
    return path


def cli_env(claude_bin: str, home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no credentials of this machine, a HOME of the test's own."""
    env = clean_env()
    home.mkdir(parents=True, exist_ok=True)
    env.update({"HOME": str(home), "OMG_CLAUDE_BIN": claude_bin, **extra})
    return env


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "repo")


Env = Callable[..., dict[str, str]]


@pytest.fixture
def env(claude_bin: str, tmp_path: Path) -> Iterator[Env]:
    def make(**extra: str) -> dict[str, str]:
        return cli_env(claude_bin, tmp_path / "home", **extra)

    yield make
