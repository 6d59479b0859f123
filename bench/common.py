"""Shared by the benchmark scripts: timing fresh processes, generated graphs, one table format,
and the one machine-readable JSON line every script ends with."""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OMG = [sys.executable, "-m", "omg"]
#: Children may cache their bytecode, as every installed Python program does: a machine that
#: sets PYTHONDONTWRITEBYTECODE would otherwise recompile omg's sources at every start.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "system": platform.platform(terse=True),
    }


def wall(
    argv: Sequence[str], cwd: Path, *, check: bool = True, env: dict[str, str] | None = None
) -> float:
    """Seconds one fresh process takes from start to exit."""
    t0 = time.perf_counter()
    res = subprocess.run(
        list(argv), cwd=cwd, capture_output=True, text=True, env=CHILD_ENV if env is None else env
    )
    took = time.perf_counter() - t0
    if check and res.returncode not in (0, 4):
        raise SystemExit(f"{' '.join(argv)} exited {res.returncode}:\n{res.stderr[-2000:]}")
    return took


def median_of(fn: Any, repeats: int) -> float:
    return statistics.median(fn() for _ in range(repeats))


def chain(n: int, name: str = "chain", run: str = "true") -> str:
    lines = [f"name: {name}", "nodes:", f"  - {{id: n0, run: '{run}'}}"]
    lines += [f"  - {{id: n{i}, depends_on: [n{i - 1}], run: '{run}'}}" for i in range(1, n)]
    return "\n".join(lines) + "\n"


def fan_out(n: int, concurrency: int, name: str = "fan") -> str:
    lines = [
        f"name: {name}",
        f"concurrency: {concurrency}",
        "nodes:",
        "  - {id: root, run: 'true'}",
    ]
    lines += [f"  - {{id: n{i}, depends_on: [root], run: 'true'}}" for i in range(n)]
    return "\n".join(lines) + "\n"


def bash_floor(commands: int, work: Path) -> float:
    """The same number of `sh -c true` children, one after another, from one bash script."""
    script = work / "floor.sh"
    script.write_text("".join("sh -c true\n" for _ in range(commands)))
    return wall(["bash", str(script)], work)


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(c) for c in header], *([str(c) for c in r] for r in rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(cells[0], widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells[1:]]
    return "\n".join(lines)


def report(
    name: str, title: str, header: Sequence[str], rows: Sequence[Sequence[Any]], data: Any
) -> None:
    """Print the table, then one JSON line: ``{"bench": name, "machine": …, "results": data}``."""
    print(table(title, header, rows))
    print(json.dumps({"bench": name, "machine": machine(), "results": data}, sort_keys=True))


def tmpfs() -> Path | None:
    """A tmpfs directory to compare against the disk, when the machine has one."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else None


def git_repo(path: Path) -> None:
    """A git repository with one commit, so omg commits the run to a branch as in CI."""
    git = shutil.which("git") or "git"
    who = {"NAME": "bench", "EMAIL": "bench@localhost"}
    env = {
        **os.environ,
        **{f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER") for k, v in who.items()},
    }
    subprocess.run([git, "init", "-q", str(path)], check=True)
    (path / "README").write_text("bench\n")
    subprocess.run([git, "-C", str(path), "add", "README"], check=True, env=env)
    subprocess.run([git, "-C", str(path), "commit", "-qm", "init"], check=True, env=env)
