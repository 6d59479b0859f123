"""Fixtures for omg.git: real repositories, bare remotes, a token-guarded smart-HTTP server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from githttp import HTTP_BACKEND, GitHttpServer, serving
from gitkit import TOKEN, UserCheckout, make_repo, runner
from pygit2.enums import ConfigLevel

from omg.git import RunRepo, open_repo


@pytest.fixture(scope="session")
def _empty_config_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("gitconfig"))


@pytest.fixture(autouse=True)
def _no_global_git_config(_empty_config_dir: str) -> Iterator[None]:
    """libgit2 must not read this machine's ~/.gitconfig: identity tests need a blank slate.

    Per test, so the process-wide setting never outlives tests/git.
    """
    empty = _empty_config_dir
    levels = (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM)
    saved = {lvl: pygit2.settings.search_path[lvl] for lvl in levels}
    for lvl in levels:
        pygit2.settings.search_path[lvl] = empty
    yield
    for lvl, value in saved.items():
        pygit2.settings.search_path[lvl] = value


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith(("GIT_", "GITHUB_", "OMG_", "RUNNER_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # for the git CLI used in checks


@pytest.fixture
def user(tmp_path: Path) -> UserCheckout:
    """A checkout with a modified tracked file, a staged change and an untracked file."""
    path = tmp_path / "user"
    repo = make_repo(path)
    (path / "README.md").write_text("hello, edited but not staged\n")
    (path / "src" / "app.py").write_text("print(2)\n")
    repo.index.add("src/app.py")
    repo.index.write()
    (path / "notes.txt").write_text("untracked\n")
    checkout = UserCheckout(path, repo)
    status = checkout.snapshot()["status"]
    assert status == " M README.md\nM  src/app.py\n?? notes.txt\n", status
    return checkout


@pytest.fixture
def run_repo(user: UserCheckout) -> RunRepo:
    found = open_repo(user.path, env={})
    assert found is not None
    return found


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """An empty bare repository, reached as file://<path>."""
    path = tmp_path / "remote.git"
    pygit2.init_repository(str(path), bare=True, initial_head="main")
    return path


@pytest.fixture
def origin(user: UserCheckout, bare: Path) -> str:
    """The user's repository with ``origin`` → file:// bare remote holding ``main``."""
    url = f"file://{bare}"
    user.repo.remotes.create("origin", url)
    runner(user.path).push("origin", ["refs/heads/main"])
    return url


# -- smart HTTP ------------------------------------------------------------------------


@pytest.fixture
def http_remote(tmp_path: Path) -> Iterator[GitHttpServer]:
    if not HTTP_BACKEND.exists():
        pytest.skip("git-http-backend is not installed")
    with serving(tmp_path / "srv", TOKEN) as srv:
        yield srv
