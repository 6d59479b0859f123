"""Every benchmark script runs from a fresh clone: a quick smoke of each (small N, no timing
assertions) that ends with its table and, for the scripts that promise one, its JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kit import clean_env

BENCH = Path(__file__).resolve().parents[2] / "bench"
#: script → (its smoke arguments, whether it ends with the machine-readable JSON line)
SMOKES = {
    "overhead.py": (["--quick"], True),
    "ci_leg.py": (["--quick"], True),
    "agent_node.py": (["--quick"], True),
    "codex_node.py": (["--quick"], True),
    "peers.py": (["--quick"], True),
    "startup.py": (["--quick"], True),
    "resume.py": (["--quick"], True),
    "memory.py": (["--quick"], True),
    "fanout.py": (["--quick"], True),
    "graph_size.py": (["--quick"], True),
    "rest_calls.py": (["--quick", "--quiet"], True),
    "stats.py": (["--quick"], True),
    "proxy.py": (["--quick"], True),
    "handoff.py": (["--quick"], True),
    "floor.py": (["--quick"], True),
    "engine_bench.py": (["--nodes", "5", "--repeats", "1"], False),
    "lint_bench.py": (["--runs", "1"], False),
    "resume_bench.py": (["--nodes", "20", "--repeats", "1"], False),
    "git_bench.py": (["--rounds", "1"], False),
}


def test_every_script_in_bench_has_a_smoke() -> None:
    scripts = {p.name for p in BENCH.glob("*.py") if p.name != "common.py"}
    assert scripts == set(SMOKES)


@pytest.mark.parametrize("script", sorted(SMOKES))
def test_the_benchmark_runs(script: str, tmp_path: Path) -> None:
    args, promises_json = SMOKES[script]
    env = clean_env()
    res = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    # engine_bench exits 1 when it misses its own targets: a verdict, not a crash
    assert res.returncode in (0, 1), res.stderr[-3000:]
    assert "Traceback" not in res.stderr, res.stderr[-3000:]
    assert res.stdout.strip(), res.stderr[-3000:]
    if promises_json:
        line = json.loads(res.stdout.strip().splitlines()[-1])
        assert line["bench"] == script.removesuffix(".py") and line["results"]
