"""Oversized graphs: how long and how much memory `omg lint`, `omg graph` and `omg run --dry-run`
take to refuse a graph past the size a run records — a fragment used hundreds of times, a
binding substituted hundreds of times, a 10 MB pattern or command.

    python bench/graph_size.py [--quick]

Each figure is one fresh process (start-up included): its wall time, its CPU time and its peak
resident set (VmHWM; the process reports both as it exits; Linux). Every case must be refused
(exit 1 for lint, 3 otherwise): a case that passes is a bug. A case still working after --limit
seconds is stopped and shown as "> LIMIT" with its peak so far.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from common import CHILD_ENV, OMG, report

#: The child reports its own peak: /proc/self/status's VmHWM is its image's alone, where
#: ru_maxrss would carry over the peak of the forked copy of this script from before exec.
#: Its CPU seconds (user + system) too: on a shared machine the wall time is mostly waiting.
_PEAK = (
    "import atexit, resource, runpy, sys\n"
    "def peak():\n"
    "    use = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    sys.stderr.write(f'\\nCPU: {use.ru_utime + use.ru_stime}\\n')\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            sys.stderr.write(line)\n"
    "atexit.register(peak)\n"
    "sys.argv = ['omg', *sys.argv[1:]]\n"
    "runpy.run_module('omg', run_name='__main__')\n"
)


def measure(
    argv: list[str], cwd: Path, limit: float
) -> tuple[float | None, float | None, float, str]:
    """(wall seconds — None past ``limit`` —, CPU seconds, peak resident MiB, the refusal) of
    one omg process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [OMG[0], "-c", _PEAK, *argv], cwd=cwd, env=CHILD_ENV, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        hwm = _hwm(Path(f"/proc/{proc.pid}/status").read_text())
        proc.kill()
        proc.communicate()
        return None, None, hwm, "(stopped: still working)"
    took = time.perf_counter() - t0
    if proc.returncode not in (1, 3):
        raise SystemExit(f"omg {' '.join(argv)} exited {proc.returncode}:\n{out[-2000:]}")
    said = next((ln for ln in out.splitlines() if "bytes" in ln), out.strip()[-200:])
    cpu = [float(ln.split()[1]) for ln in out.splitlines() if ln.startswith("CPU: ")]
    return took, cpu[-1] if cpu else None, _hwm(out), said


def _hwm(text: str) -> float:
    """The VmHWM figure in ``text`` (a /proc status), in MiB."""
    found = [ln.split()[1] for ln in text.splitlines() if ln.startswith("VmHWM:")]
    return int(found[-1]) / 1024 if found else float("nan")


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
    ap.add_argument("--limit", type=float, default=300, help="seconds before a case is stopped")
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
            took, cpu, rss, said = measure([str(a) for a in argv], work, args.limit)
            shown = f"> {args.limit:.0f}" if took is None else f"{took:.2f}"
            rows.append(
                [name, shown, "-" if cpu is None else f"{cpu:.2f}", f"{rss:.1f}", said[:90]]
            )
            data[name] = {
                "seconds": None if took is None else round(took, 3),
                "cpu_seconds": None if cpu is None else round(cpu, 3),
                "peak_rss_mib": round(rss, 1),
            }
        header = ["case", "seconds", "CPU s", "peak RSS MiB", "refusal"]
        report("graph_size", "refusing an oversized graph", header, rows, data)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
