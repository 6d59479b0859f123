"""Shell completion: run ids from `.omg/runs/`, a run's node and gate ids from its state.json,
through typer's own completion machinery; hostile or damaged directories complete nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit import clean_env, omg_in_process, write_graph

from omg.cli.complete import gate_ids, node_ids, run_ids

GATED = """\
name: gated
nodes:
  - id: build
    run: 'true'
  - id: ship
    type: gate
    depends_on: [build]
  - id: deploy
    depends_on: [ship]
    run: 'true'
"""


def complete(cwd: Path, *words: str) -> list[str]:
    """What bash is offered for the last word of ``omg WORDS…`` (empty: a new word)."""
    env = clean_env(
        _OMG_COMPLETE="complete_bash",
        COMP_WORDS=" ".join(["omg", *words]),
        COMP_CWORD=str(len(words)),
    )
    done = omg_in_process(cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr
    return [ln for ln in done.stdout.splitlines() if ln]  # bash is given a blank for none


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Two real runs (one paused at its gate) and things in the runs directory that are not."""
    write_graph(tmp_path, GATED, "gated.yaml")
    for rid in ("pr-7-gated-abc1234", "pr-8-gated-def5678"):
        done = omg_in_process("run", "gated.yaml", "--run-id", rid, "--no-commit", cwd=tmp_path)
        assert done.returncode == 4, done.stderr
    root = tmp_path / ".omg" / "runs"
    (root / "not a run").mkdir()
    (root / "-rf").mkdir()
    (root / "stray.txt").write_text("x")
    return root


def test_run_ids_complete_from_the_runs_directory(tmp_path: Path, runs: Path) -> None:
    assert complete(tmp_path, "status", "") == ["pr-7-gated-abc1234", "pr-8-gated-def5678"]
    assert complete(tmp_path, "resume", "pr-8") == ["pr-8-gated-def5678"]
    for command in ("log", "replay", "clean", "plan"):
        assert complete(tmp_path, command, "pr-7") == ["pr-7-gated-abc1234"]
    assert complete(tmp_path, "status", "--runs-dir", str(runs), "pr-7") == ["pr-7-gated-abc1234"]
    assert complete(tmp_path, "status", "--runs-dir", str(tmp_path / "nowhere"), "") == []


def test_node_and_gate_ids_complete_from_the_runs_state(tmp_path: Path, runs: Path) -> None:
    rid = "pr-7-gated-abc1234"
    assert complete(tmp_path, "status", rid, "--node", "") == ["build", "ship", "deploy"]
    assert complete(tmp_path, "log", rid, "--node", "build", "--node", "d") == ["deploy"]
    assert complete(tmp_path, "resume", rid, "--approve", "") == ["ship"]
    assert complete(tmp_path, "resume", rid, "--reject", "s") == ["ship"]
    assert complete(tmp_path, "status", "no-such-run", "--node", "") == []


def test_a_hostile_or_damaged_record_completes_nothing_and_never_raises(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    root.mkdir()
    (root / "list").mkdir()
    (root / "list" / "state.json").write_text("[1, 2]")
    (root / "garbled").mkdir()
    (root / "garbled" / "state.json").write_text("{not json")
    (root / "deep").mkdir()
    (root / "deep" / "state.json").write_text("[" * 100_000 + "]" * 100_000)
    (root / "dir").mkdir()
    (root / "dir" / "state.json").mkdir()
    (root / "odd").mkdir()
    state = {
        "graph": {"nodes": [{"id": "ok"}, {"id": "two words"}, {"id": "x\ny"}, "id", {"id": 3}]},
        "nodes": {"ok": {}, "$(rm -rf ~)": {}, "later": {}},
        "paused_at": ["not", "a", "gate"],
    }
    (root / "odd" / "state.json").write_text(json.dumps(state))
    for rid in ("list", "garbled", "deep", "dir", "missing", "../odd", ""):
        assert node_ids(root, rid, "") == [] and gate_ids(root, rid, "") == []
    assert node_ids(root, "odd", "") == ["ok", "later"]
    assert gate_ids(root, "odd", "") == []
    (tmp_path / "file").write_text("")
    assert run_ids(tmp_path / "file", "") == [] and run_ids(tmp_path / "none", "") == []


def test_show_completion_prints_a_bash_script_calling_omg(tmp_path: Path) -> None:
    done = omg_in_process("--show-completion", "bash", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "_OMG_COMPLETE=complete_bash" in done.stdout
    assert "complete -o default -F _omg_completion omg" in done.stdout
