"""The floor under omg's speed targets: what the parts omg is built from cost with no omg code
at all, so a target can be read against what any leg made of them must pay.

    python bench/floor.py [--quick] [--repeats 7] [--nodes 300]

Each figure is the median of fresh processes, interleaved:

* start-up: the interpreter alone (``python -c pass``, and ``-I -S``, without the site's
  ``.pth`` files), then the interpreter importing the libraries a step needs — yaml (a graph
  file), pygit2 (a commit, a fetch, a push), ``urllib.request`` (GitHub's REST API), the
  standard library modules a leg uses — and nothing of omg;
* the chain: ``--nodes`` children of ``sh -c true`` one after another from bash (the
  benchmarks' floor), from the smallest Python script that can run them (``subprocess.run`` in
  a loop, nothing recorded), from one that gives each child a room as omg does (a directory
  with ``home/`` and ``tmp/``, removed after), and from one that makes a pygit2 commit of one
  small file after each (its branch moved by each commit, or once at the end);
* a push: one commit pushed by pygit2 to the smart-HTTP stand-in the CI leg's benchmark serves
  (``git http-backend`` on 127.0.0.1, a token), as the leg pushes its run branch.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import pygit2  # noqa: E402
from common import CHILD_ENV, bash_floor, git_repo, report  # noqa: E402
from githttp import serving  # noqa: E402

TOKEN = "floor-token"
#: The standard library `omg run --no-commit` imports before its first node (``-X importtime``
#: of the demo, the modules the interpreter loads at every start left out), by their top level.
STDLIB = (
    "base64, bisect, concurrent.futures, copy, ctypes, dataclasses, datetime, fcntl, getpass, "
    "hashlib, heapq, hmac, inspect, json, locale, logging, queue, random, secrets, selectors, "
    "shutil, signal, string, subprocess, tempfile, termios, textwrap, threading, traceback, "
    "typing, unicodedata, urllib.parse, weakref, pathlib"
)
#: Of those, what a leg as the spec and the style guide have it cannot do without: children,
#: threads, JSON records, their hashes, frozen dataclasses and typed records, paths.
LEAST = "subprocess, threading, json, hashlib, dataclasses, typing, pathlib"
#: label → the Python a fresh process runs (``python -I -S`` for the first: no site at all)
START = {
    "python -c pass": "pass",
    "python -I -S -c pass": "pass",
    "+ import yaml": "import yaml",
    "+ import pygit2": "import pygit2",
    "+ import urllib.request": "import urllib.request",
    "+ all three (a CI leg's libraries)": "import yaml, pygit2, urllib.request",
    "+ the standard library a leg cannot do without": f"import {LEAST}",
    "+ yaml and that (the least before a first node)": f"import yaml, {LEAST}",
    "+ the standard library omg's leg imports": f"import {STDLIB}",
    "+ the CI leg's libraries and the least": f"import yaml, pygit2, urllib.request, {LEAST}",
}
SPAWN = """
import subprocess, sys
for _ in range(int(sys.argv[1])):
    subprocess.run(["sh", "-c", "true"])
"""
#: Each child in a room of its own, as omg runs a node: a fresh directory holding ``home/`` (with
#: a ``.gitconfig``) and ``tmp/``, the child's HOME and TMPDIR, removed after it.
ROOMS = """
import os, subprocess, sys, tempfile
for _ in range(int(sys.argv[1])):
    room = tempfile.mkdtemp(prefix="room-")
    os.mkdir(f"{room}/home")
    os.mkdir(f"{room}/tmp")
    with open(f"{room}/home/.gitconfig", "w") as f:
        f.write("[user]\\n\\tname = floor\\n")
    env = {"PATH": os.environ["PATH"], "HOME": f"{room}/home", "TMPDIR": f"{room}/tmp"}
    subprocess.run(["sh", "-c", "true"], env=env, cwd=room)
    os.unlink(f"{room}/home/.gitconfig")
    for d in ("home", "tmp", ""):
        os.rmdir(f"{room}/{d}")
"""
#: argv: the number of nodes, the repository, and ``HEAD`` (the branch moved by every commit)
#: or ``end`` (commits chained in memory, the branch moved once after the last)
COMMIT = """
import subprocess, sys, pygit2
repo = pygit2.Repository(sys.argv[2])
who = pygit2.Signature("floor", "floor@localhost")
head, tree = repo.head.target, repo.head.peel(pygit2.Commit).tree
ref = None if sys.argv[3] == "end" else "HEAD"
for i in range(int(sys.argv[1])):
    subprocess.run(["sh", "-c", "true"])
    tb = repo.TreeBuilder(tree)
    tb.insert("n", repo.create_blob(f"node {i}\\n".encode()), pygit2.GIT_FILEMODE_BLOB)
    tree = repo[tb.write()]
    head = repo.create_commit(ref, who, who, f"n{i}", tree.id, [head])
repo.references[repo.head.name].set_target(head)
"""


def seconds(argv: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=CHILD_ENV, check=True, capture_output=True)
    return time.perf_counter() - t0


def start_up(work: Path, repeats: int) -> dict[str, float]:
    runs: dict[str, list[float]] = {label: [] for label in START}
    for _ in range(repeats):
        for label, code in START.items():
            flags = ["-I", "-S"] if "-I -S" in label else []
            runs[label].append(seconds([sys.executable, *flags, "-c", code], work))
    return {label: statistics.median(t) * 1000 for label, t in runs.items()}


def chain(work: Path, nodes: int, repeats: int) -> dict[str, float]:
    repo = work / "repo"
    git_repo(repo)
    each, once = "python + a commit each", "python + a commit each, the branch moved at the end"
    rooms = "python, each child in a room of its own"
    runs: dict[str, list[float]] = {"bash": [], "python": [], rooms: [], each: [], once: []}
    for _ in range(repeats):
        runs["bash"].append(bash_floor(nodes, work))
        runs["python"].append(seconds([sys.executable, "-c", SPAWN, str(nodes)], work))
        runs[rooms].append(seconds([sys.executable, "-c", ROOMS, str(nodes)], work))
        for label, how in ((each, "HEAD"), (once, "end")):
            argv = [sys.executable, "-c", COMMIT, str(nodes), str(repo), how]
            runs[label].append(seconds(argv, work))
    return {label: statistics.median(t) for label, t in runs.items()}


def push_ms(work: Path, repeats: int) -> float:
    """One new commit on a branch pushed to the stand-in, as a leg pushes its run branch."""
    took = []
    with serving(work / "github", TOKEN) as git:
        repo = pygit2.init_repository(str(work / "clone"), initial_head="main")
        who = pygit2.Signature("floor", "floor@localhost")
        remote = repo.remotes.create("origin", git.url)
        creds = pygit2.RemoteCallbacks(pygit2.UserPass("x-access-token", TOKEN))
        parents: list[pygit2.Oid] = []
        for i in range(repeats + 1):
            tb = repo.TreeBuilder()
            tb.insert("f", repo.create_blob(f"{i}\n".encode()), pygit2.GIT_FILEMODE_BLOB)
            oid = repo.create_commit("refs/heads/run", who, who, f"{i}", tb.write(), parents)
            parents = [oid]
            t0 = time.perf_counter()
            remote.push(["refs/heads/run:refs/heads/run"], callbacks=creds)
            if i:  # the first push creates the branch
                took.append(time.perf_counter() - t0)
    return statistics.median(took) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1 repeat, a 5-node chain")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--nodes", type=int, default=300)
    args = ap.parse_args()
    repeats, nodes = (1, 5) if args.quick else (args.repeats, args.nodes)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        start = start_up(work, repeats)
        loop = chain(work, nodes, repeats)
        push = push_ms(work, repeats)
    bash = loop["bash"]
    rows = [["start-up", label, f"{ms:.1f} ms", ""] for label, ms in start.items()]
    rows += [
        [f"{nodes}-chain", label, f"{s:.3f} s", f"{s / bash:.2f}× bash"]
        for label, s in loop.items()
    ]
    rows.append(["push", "one commit to the smart-HTTP stand-in", f"{push:.1f} ms", ""])
    data = {"nodes": nodes, "start_ms": start, "chain_s": loop, "push_ms": push}
    report("floor", f"the floor, no omg code (median of {repeats})", ["part", "what", "took", ""],
           rows, data)  # fmt: skip


if __name__ == "__main__":
    main()
