"""Helpers for the omg.git tests: repositories, run directories, a dirty user checkout."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from omg.git import RunRepo, open_repo

TOKEN = "ghs_test-token-0123456789abcdef"  # a fake; tests prove it never reaches disk
SIG = pygit2.Signature("Test Person", "test@example.com")


def git(cwd: Path, *args: str) -> str:
    """The git CLI, for checking only (never to set up what omg.git is tested on)."""
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout


def commit_files(repo: pygit2.Repository, files: dict[str, str], message: str) -> str:
    """Write files into the checkout and commit them on HEAD through its index."""
    root = Path(repo.workdir or "")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        repo.index.add(rel)
    repo.index.write()
    tree = repo.index.write_tree()
    parents = [] if repo.head_is_unborn else [repo.head.target]
    return str(repo.create_commit("HEAD", SIG, SIG, message, tree, parents))


def make_repo(path: Path, files: dict[str, str] | None = None) -> pygit2.Repository:
    repo = pygit2.init_repository(str(path), initial_head="main")
    commit_files(repo, files or {"README.md": "hello\n", "src/app.py": "print(1)\n"}, "initial")
    return repo


def make_run_dir(path: Path, n_artifacts: int = 2, seq: int = 1) -> Path:
    """A run directory as the engine leaves it, with a lock file and a temp file to skip."""
    (path / "artifacts").mkdir(parents=True, exist_ok=True)
    (path / "state.json").write_text(f'{{"seq": {seq}}}\n')
    (path / "events.jsonl").write_text("".join(f'{{"seq": {i}}}\n' for i in range(1, seq + 1)))
    for i in range(n_artifacts):
        (path / "artifacts" / f"n{i}.out").write_text(f"artifact {i}\n")
    (path / "leg.lock").write_text("")
    (path / ".state.json.tmp-abc").write_text("partial")
    return path


@dataclass
class UserCheckout:
    """The user's repository, left dirty on purpose: omg must leave every bit of it alone."""

    path: Path
    repo: pygit2.Repository

    def snapshot(self) -> dict[str, object]:
        files = {
            str(p.relative_to(self.path)): p.read_bytes()
            for p in sorted(self.path.rglob("*"))
            if p.is_file() and ".git" not in p.parts and ".omg" not in p.parts
        }
        return {
            "HEAD": (self.path / ".git" / "HEAD").read_text(),
            "head": git(self.path, "rev-parse", "HEAD"),
            "index": (self.path / ".git" / "index").read_bytes(),
            "config": (self.path / ".git" / "config").read_bytes(),
            "status": git(self.path, "status", "--porcelain=v1", "--untracked-files=all"),
            "files": files,
        }


def runner(path: Path) -> RunRepo:
    """The run repository of a checkout, with no commit identity from the environment."""
    found = open_repo(path, env={})
    assert found is not None
    return found


def clone(url: str, path: Path) -> pygit2.Repository:
    return pygit2.clone_repository(url, str(path))


def ci_checkout(url: str, path: Path) -> pygit2.Repository:
    """What actions/checkout leaves: ``main`` only, from ``origin``; no omg branches."""
    repo = pygit2.init_repository(str(path), initial_head="main")
    repo.remotes.create("origin", url)
    repo.remotes["origin"].fetch(["+refs/heads/main:refs/remotes/origin/main"])
    tip = repo.references["refs/remotes/origin/main"].target
    repo.create_reference_direct("refs/heads/main", tip, False)
    repo.checkout("refs/heads/main")
    return repo


def tree_files(repo: pygit2.Repository, commit: str) -> dict[str, bytes]:
    """Every file of a commit's tree: path → bytes."""
    out: dict[str, bytes] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                walk(obj, f"{prefix}{entry.name}/")
            else:
                out[prefix + (entry.name or "")] = obj.peel(pygit2.Blob).data

    walk(repo[commit].peel(pygit2.Commit).tree, "")
    return out


def all_bytes_under(path: Path) -> Callable[[bytes], list[Path]]:
    """A finder of files under ``path`` containing some bytes (packs and loose objects too)."""

    def find(needle: bytes) -> list[Path]:
        return [p for p in path.rglob("*") if p.is_file() and needle in p.read_bytes()]

    return find
