"""Oversized graphs: how long and how much memory `omg lint`, `omg graph` and `omg run --dry-run`
take to refuse a graph past the size a run records — a fragment used hundreds of times, a
binding substituted hundreds of times, a 10 MB pattern or command.

    python bench/graph_size.py [--quick]

Each figure is one fresh process (start-up included): its wall time and its max RSS, read with
wait4(). Every case must be refused (exit 1 for lint, 3 otherwise): a case that passes is a bug.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from common import CHILD_ENV, OMG, report


def measure(argv: list[str], cwd: Path) -> tuple[float, float, str]:
    """(seconds, max RSS in MiB, the last line it printed) of one refusing process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=CHILD_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (1, 3):
        raise SystemExit(f"{' '.join(argv)} exited {code}, not a refusal:\n{out[-2000:]}")
    said = next((ln for ln in out.splitlines() if "bytes" in ln), out.strip()[-200:])
    return took, usage.ru_maxrss / 1024, said


def build(work: Path, mb: int, uses: int) -> dict[str, Path]:
    """The oversized graphs, in a repository of their own."""
    (work / ".git").mkdir()
    frags = work / "graphs" / "fragments"
    frags.mkdir(parents=True)
    big = "x" * (240 * 1024 - 200)
    (frags / "wide.yaml").write_text(
        f"fragment: wide\ndescription: d\nnode:\n  run: 'true'\n  description: {big}\n"
    )
    tools = "".join(f"    - t{i}\n" for i in range(19_000))  # 230 KB of small values
    (frags / "many.yaml").write_text(
        f"fragment: many\ndescription: d\nnode:\n  prompt: p\n  allowed_tools:\n{tools}"
    )
    points = "".join(f"    - '{{{{ with.tool }}}} {i}'\n" for i in range(1000))
    (frags / "echo.yaml").write_text(
        "fragment: echo\ndescription: d\nsubstitutions: [tool]\nnode:\n  prompt: p\n"
        f"  allowed_tools:\n{points}"
    )
    g = work / "graphs"
    out = {}
    for name in ("wide", "many"):
        body = "".join(f"  - id: n{i}\n    use: {name}\n" for i in range(uses))
        out[f"use-{name}"] = g / f"use-{name}.yaml"
        out[f"use-{name}"].write_text(f"name: {name}\nnodes:\n{body}")
    out["echo"] = g / "echo.yaml"
    out["echo"].write_text(
        f"name: echo\nnodes:\n  - id: a\n    use: echo\n    with: {{tool: {'t' * 200_000}}}\n"
    )
    pad = "a" * (mb * 1024 * 1024)
    out["pattern"] = g / "pattern.yaml"
    out["pattern"].write_text(
        f"name: p\nnodes:\n  - id: a\n    run: 'true'\n    success_check:\n"
        f"      result_matches: '{pad}'\n"
    )
    out["command"] = g / "command.yaml"
    out["command"].write_text(f"name: c\nnodes:\n  - id: a\n    run: 'echo {pad}'\n")
    half = "a" * (900 * 1024)  # within a graph file's limit, past the snapshot's
    out["pattern-900k"] = g / "pattern-900k.yaml"
    out["pattern-900k"].write_text(
        f"name: p\nnodes:\n  - id: a\n    run: 'true'\n    success_check:\n"
        f"      result_matches: '{half}'\n"
    )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: 2 MB values, 20 uses")
    args = ap.parse_args()
    mb, uses = (2, 20) if args.quick else (10, 400)
    work = Path(tempfile.mkdtemp(prefix="omg-graph-size-"))
    try:
        g = build(work, mb, uses)
        cases = [
            (f"{uses} uses of a 240 KB fragment (one long value)", ["lint", g["use-wide"]]),
            (f"{uses} uses of a 240 KB fragment (19,000 values)", ["lint", g["use-many"]]),
            ("a 200 KB binding substituted 1,000 times", ["lint", g["echo"]]),
            (f"a {mb} MB result_matches", ["lint", g["pattern"]]),
            ("a 900 KB result_matches (file within its limit)", ["lint", g["pattern-900k"]]),
            (f"a {mb} MB run:, --dry-run", ["run", "--dry-run", g["command"]]),
            (f"a {mb} MB run:, omg graph", ["graph", g["command"]]),
            (f"{uses} uses of a 240 KB fragment, --dry-run", ["run", "--dry-run", g["use-wide"]]),
        ]
        rows, data = [], {}
        for name, argv in cases:
            took, rss, said = measure([*OMG, *map(str, argv)], work)
            rows.append([name, f"{took:.2f}", f"{rss:.1f}", said[:90]])
            data[name] = {"seconds": round(took, 3), "max_rss_mib": round(rss, 1)}
        header = ["case", "seconds", "max RSS MiB", "refusal"]
        report("graph_size", "refusing an oversized graph", header, rows, data)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
