"""`omg plan RUN --matrix`: the wave as JSON on stdout and in GITHUB_OUTPUT, notes on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kit import clean_env

GRAPH = """\
name: fanout
concurrency: 3
nodes:
  - {id: root, run: 'true'}
  - {id: a, depends_on: [root], run: 'true'}
  - {id: b, depends_on: [root], run: 'true', worktree: lane}
  - {id: c, depends_on: [root], run: 'true', worktree: lane}
  - {id: d, depends_on: [root], run: 'true'}
  - {id: e, depends_on: [root], run: 'true'}
"""


def omg(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "omg", *args], cwd=cwd, env=clean_env(**env),
        capture_output=True, text=True,
    )  # fmt: skip


def test_the_next_wave_is_printed_and_written_as_a_github_matrix(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text(GRAPH)
    assert omg(tmp_path, "run", "g.yaml", "--run-id", "x", "--max-nodes", "1").returncode == 4
    out = tmp_path / "github_output"
    done = omg(tmp_path, "plan", "x", "--matrix", GITHUB_OUTPUT=str(out))
    assert done.returncode == 0, done.stderr
    wave = json.loads(done.stdout)
    assert wave == {"include": [{"node": "a", "nodes": "a"}, {"node": "b", "nodes": "b c"},
                                {"node": "d", "nodes": "d"}]}  # fmt: skip
    assert "held for the next wave: e" in done.stderr
    written = out.read_text()
    assert done.stdout.strip() in written and "count<<" in written


def test_an_empty_wave_says_so(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text(GRAPH)
    assert omg(tmp_path, "run", "g.yaml", "--run-id", "x").returncode == 0
    done = omg(tmp_path, "plan", "x", "--matrix")
    assert json.loads(done.stdout) == {"include": []}
    assert "empty matrix" in done.stderr


def test_plan_without_matrix_or_of_no_run_is_refused_with_what_to_type(tmp_path: Path) -> None:
    assert "omg plan RUN_ID --matrix" in omg(tmp_path, "plan", "x").stderr
    missing = omg(tmp_path, "plan", "nope", "--matrix")
    assert missing.returncode == 3 and "`omg status` lists the runs" in missing.stderr
