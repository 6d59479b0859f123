"""Helpers for the leg tests: graphs on disk, run directories, events, and the real CLI."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit import OmgProcess, spawn_omg

RUNS = Path(".omg") / "runs"


def write_graph(root: Path, text: str, name: str = "g.yaml") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / name
    path.write_text(text)
    return path


def run_path(root: Path, run_id: str) -> Path:
    return root / RUNS / run_id


def events(run_dir: Path) -> list[dict[str, Any]]:
    """events.jsonl, then the chunks in events/ (a run past its first 128 events)."""
    paths = [run_dir / "events.jsonl", *sorted((run_dir / "events").glob("*.jsonl"))]
    text = "".join(p.read_text() for p in paths if p.exists())
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def state(run_dir: Path) -> dict[str, Any]:
    """The run's state as a reader sees it: state.json (a checkpoint, which may lag the log)
    with the events past its seq folded on."""
    from omg.state import fold

    snap = json.loads((run_dir / "state.json").read_text())
    tail = [e for e in events(run_dir) if e["seq"] > snap["seq"]]
    return dict(fold(tail, snap)) if tail else snap


def of_kind(evs: list[dict[str, Any]], *kinds: str, leg: int | None = None) -> list[dict[str, Any]]:
    return [e for e in evs if e["event"] in kinds and (leg is None or e["leg"] == leg)]


def launches(evs: list[dict[str, Any]], leg: int | None = None) -> list[tuple[str, int]]:
    """(node id, round) of every node_started, in file order."""
    return [(e["node_id"], e.get("round", 0)) for e in of_kind(evs, "node_started", leg=leg)]


def log_lines(root: Path, name: str = "log.txt") -> list[str]:
    path = root / name
    return path.read_text().split() if path.exists() else []


def comparable(st: dict[str, Any]) -> dict[str, Any]:
    """The stable view minus what legitimately differs between an interrupted run and a clean one.

    Legs (how many processes it took) and seq (how many events they wrote) differ by construction;
    everything else — every node record, gate decision, cost, status — must not.
    """
    from omg.state import stable_view

    out = stable_view(st)
    out.pop("legs")
    out.pop("seq")
    return out


def child_env(**extra: str) -> dict[str, str]:
    """A clean environment for omg subprocesses (the kit's one scrub: ``kit.clean_env``)."""
    from kit import clean_env

    return clean_env(**extra)


def omg_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "omg", *args]


def popen_omg(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> OmgProcess | subprocess.Popen[str]:
    """Start the real CLI in a process of its own, in its own process group (so a test can
    SIGKILL the whole group): forked from the kit's server that has omg imported."""
    return spawn_omg(*args, cwd=cwd, env=env or child_env(), new_session=True)


def kill_group(proc: OmgProcess | subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()


def wait_for(pred: Callable[[], bool], timeout: float = 20.0, step: float = 0.002) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError("condition not reached in time")
        time.sleep(step)


@dataclass(frozen=True)
class Ran:
    """What one in-process `omg` invocation did: its exit code and what it printed."""

    code: int
    out: str
    err: str


def omg_here(cwd: Path, *argv: str) -> Ran:
    """The `omg` entry point, run in this process from ``cwd`` with this process's environment
    (``kit.omg_in_process``): fast, and ``argv`` may hold what no OS command line can, such as
    NUL."""
    from kit import omg_in_process

    done = omg_in_process(*argv, cwd=cwd, env=dict(os.environ))
    return Ran(done.returncode, done.stdout, done.stderr)


def tree(root: Path) -> dict[str, bytes | str]:
    """Every path under ``root`` and its bytes (what a special file is, never opening it);
    leg.lock left out, as each leg rewrites its holder's pid, and verified.json, the record
    check's cache of how far it got, and ledger.json, the ledger kept with it (never part of
    the record: see tests/state/test_vouched, test_kept)."""
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        mode = path.lstat().st_mode
        rel = path.relative_to(root).as_posix()
        if path.name in ("leg.lock", "verified.json", "ledger.json"):
            continue
        if stat.S_ISLNK(mode):
            out[rel] = f"link to {os.readlink(path)}"
        elif stat.S_ISREG(mode):
            out[rel] = path.read_bytes()
        else:
            out[rel] = "dir" if stat.S_ISDIR(mode) else f"special {stat.S_IFMT(mode):o}"
    return out


# -- runs in git ------------------------------------------------------------------------------

SIG_NAME, SIG_EMAIL = "Test Person", "test@example.com"


def git_checkout(root: Path, files: dict[str, str]) -> Path:
    """A repository at ``root`` with ``files`` committed on main (what a leg runs in)."""
    import pygit2

    repo = pygit2.init_repository(str(root), initial_head="main")
    for name, text in files.items():
        (root / name).write_text(text)
        repo.index.add(name)
    repo.index.write()
    sig = pygit2.Signature(SIG_NAME, SIG_EMAIL)
    repo.create_commit("HEAD", sig, sig, "initial", repo.index.write_tree(), [])
    return root


def bare_origin(work: Path, bare: Path) -> str:
    """A bare repository ``bare``, added to ``work`` as ``origin`` with main pushed; its URL."""
    import pygit2

    pygit2.init_repository(str(bare), bare=True, initial_head="main")
    url = bare.as_uri()
    pygit2.Repository(str(work)).remotes.create("origin", url).push(["refs/heads/main"])
    return url


def clone_of(url: str, path: Path) -> Path:
    """Another machine's checkout of ``url`` (``origin`` → ``url``)."""
    import pygit2

    pygit2.clone_repository(url, str(path))
    return path


def remote_state(bare: Path, run_id: str) -> dict[str, Any]:
    """state.json as the remote's run branch holds it."""
    import pygit2

    repo = pygit2.Repository(str(bare))
    commit = repo.revparse_single(f"refs/heads/omg/runs/{run_id}").peel(pygit2.Commit)
    return json.loads(repo[commit.tree["state.json"].id].data)


def remote_log(bare: Path, ref: str) -> list[str]:
    """Commit ids along first parents of ``ref`` on the remote, newest first."""
    import pygit2

    repo = pygit2.Repository(str(bare))
    out, commit = [], repo.revparse_single(ref).peel(pygit2.Commit)
    while True:
        out.append(str(commit.id))
        if not commit.parents:
            return out
        commit = commit.parents[0]


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"
