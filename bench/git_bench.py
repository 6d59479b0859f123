"""Cost of keeping a run in git: commit_run_dir per settled node, and commit + push.

Run: ``python bench/git_bench.py [--rounds N]``. Everything happens in a temporary
directory: a user repository, a run directory of 10, 100 or 1,000 files, and a local bare
remote reached over file://. Each round mimics one settled node (state.json rewritten,
one event appended, one new artifact) and times the git work for it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import pygit2

from omg.git import RunRepo, open_repo

SIZES = (10, 100, 1000)
SIG = pygit2.Signature("bench", "bench@example.com")


def _user_repo(path: Path) -> RunRepo:
    repo = pygit2.init_repository(str(path), initial_head="main")
    (path / "README.md").write_text("bench\n")
    repo.index.add("README.md")
    repo.index.write()
    repo.create_commit("HEAD", SIG, SIG, "initial", repo.index.write_tree(), [])
    found = open_repo(path, env={})
    assert found is not None
    return found


def _run_dir(path: Path, files: int) -> Path:
    (path / "artifacts").mkdir(parents=True)
    (path / "state.json").write_text('{"seq": 0}\n')
    (path / "events.jsonl").write_text("")
    for i in range(files - 2):
        (path / "artifacts" / f"n{i:04d}.out").write_text(f"artifact {i}\n" * 20)
    return path


def _settle(run_dir: Path, seq: int) -> None:
    (run_dir / "state.json").write_text(f'{{"seq": {seq}, "pad": "{"x" * 2000}"}}\n')
    with (run_dir / "events.jsonl").open("a") as fh:
        fh.write(f'{{"seq": {seq}, "event": "node_passed"}}\n')
    (run_dir / "artifacts" / f"settled-{seq}.out").write_text(f"node {seq} output\n")


def measure(files: int, rounds: int) -> tuple[float, float]:
    """(median ms of commit_run_dir, median ms of commit_run_dir + push) for one size."""
    with tempfile.TemporaryDirectory(prefix="omg-git-bench-") as tmp:
        root = Path(tmp)
        repo = _user_repo(root / "user")
        pygit2.init_repository(str(root / "remote.git"), bare=True)
        remote = f"file://{root / 'remote.git'}"
        run_dir = _run_dir(root / "user" / ".omg" / "runs" / "bench", files)
        head = repo.commit_run_dir("bench", run_dir, "leg 1: started", expect_parent=None)
        repo.push(remote, ["refs/heads/omg/runs/bench"])
        commit_ms: list[float] = []
        push_ms: list[float] = []
        for seq in range(1, 2 * rounds + 1):
            _settle(run_dir, seq)
            start = time.perf_counter()
            head = repo.commit_run_dir("bench", run_dir, f"node {seq}", expect_parent=head)
            committed = time.perf_counter()
            if seq % 2:
                commit_ms.append((committed - start) * 1000)
                continue
            repo.push(remote, ["refs/heads/omg/runs/bench"])
            push_ms.append((time.perf_counter() - start) * 1000)
        return statistics.median(commit_ms), statistics.median(push_ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds per cell")
    args = parser.parse_args()
    print(f"pygit2 {pygit2.__version__}, libgit2 {pygit2.LIBGIT2_VERSION}; median of {args.rounds}")
    print(f"{'files':>6} | {'commit_run_dir ms':>17} | {'commit + push ms':>16}")
    print(f"{'-' * 6}-+-{'-' * 17}-+-{'-' * 16}")
    for files in SIZES:
        commit, push = measure(files, args.rounds)
        print(f"{files:>6} | {commit:>17.2f} | {push:>16.2f}")


if __name__ == "__main__":
    main()
