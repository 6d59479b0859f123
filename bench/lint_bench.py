"""Cold wall time of `python -m omg.lint` on a small graph and on a generated 2,000-node graph.

Run: python bench/lint_bench.py [--runs N]. Each run is a fresh process, so the figures
include interpreter start-up and every import, which is what a pre-commit hook pays.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMALL = """\
name: review-loop
inputs:
  task: {description: what to build, required: true}
nodes:
  - id: impl
    prompt: |
      Implement {{ inputs.task }}. Review feedback, empty on the first pass:
      {{ feedback.review }}
    worktree: lane
    allowed_tools: [Read, Edit, Write, "Bash(make *)"]
    success_check: {exit_zero: true, result_matches: '^[*_`\\s]*DONE\\b'}
  - id: tests
    depends_on: [impl]
    run: make test
    worktree: lane
    retry: {max: 1, on: [nonzero_exit]}
  - id: review
    depends_on: [tests]
    prompt: Review the diff. Start with SHIP IT, or list required fixes.
    worktree: lane
    allowed_tools: [Read]
    success_check: {exit_zero: true, result_matches: '^[*_`\\s]*SHIP IT\\b'}
    feedback: {rerun: impl, max: 2}
  - id: approve
    type: gate
    depends_on: [review]
    description: Merge the change?
"""


def big_graph(segments: int = 100, size: int = 20) -> str:
    """``segments`` chains of ``size`` nodes; each chain fans in from the two before it, holds a
    gate, and ends in a reviewer whose feedback arc re-runs its last five nodes."""
    lines = ["name: bench-2000", "inputs: [task]", "nodes:"]
    for s in range(segments):
        for k in range(size):
            nid = f"s{s:03d}-{k:02d}"
            parents = (
                [f"s{s:03d}-{k - 1:02d}"]
                if k
                else [f"s{p:03d}-{size - 1:02d}" for p in (s - 1, s - 2) if p >= 0]
            )
            lines.append(f"  - id: {nid}")
            if parents:
                lines.append(f"    depends_on: [{', '.join(parents)}]")
            if k == size // 2:
                lines.append("    type: gate")
                continue
            if k == size - 5:
                lines.append(
                    f'    prompt: "Redo {{{{ inputs.task }}}}: '
                    f'{{{{ feedback.s{s:03d}-{size - 1:02d} }}}}"'
                )
                lines.append("    allowed_tools: [Read, Edit]")
                continue
            quoted = f"{{{{ artifacts.{parents[0]} }}}}" if parents else "{{ inputs.task }}"
            lines.append(f"    run: make step INPUT={quoted}")
            lines.append("    timeout: 5m")
            if k == size - 1:
                lines.append(f"    feedback: {{rerun: s{s:03d}-{size - 5:02d}, max: 2}}")
                lines.append("    retry: {max: 1, on: [nonzero_exit]}")
    return "\n".join(lines) + "\n"


def cold(path: Path, runs: int) -> tuple[float, float, int]:
    """(median ms, min ms, exit code) of ``python -m omg.lint path`` in fresh processes."""
    times, code = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "omg.lint", str(path)], capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
        code = done.returncode
    return statistics.median(times), min(times), code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp) / "small.yaml", Path(tmp) / "big.yaml"
        small.write_text(SMALL)
        big.write_text(big_graph())
        base = statistics.median(_time([sys.executable, "-c", "pass"]) for _ in range(runs))
        print(f"python -c pass (interpreter start-up): median {base:.0f} ms")
        for label, path in (("small graph (4 nodes)", small), ("2,000-node graph", big)):
            median, best, code = cold(path, runs)
            verdict = "valid" if code == 0 else f"exit {code}"
            print(
                f"omg lint {label}: median {median:.0f} ms, min {best:.0f} ms "
                f"over {runs} cold runs ({verdict})"
            )


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True)
    return (time.perf_counter() - start) * 1000


if __name__ == "__main__":
    main()
