"""`--format json`: `omg status` (the list, one run, one node, a remote's runs) and the outcome
line `omg run` / `omg resume` end stdout with, each valid against schemas/status.schema.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pygit2
from kit import clean_env, omg_in_process, write_graph

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "schemas" / "status.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
GATED = """\
name: gated
nodes:
  - id: build
    run: echo built
  - id: ship
    type: gate
    depends_on: [build]
"""
FAILING = "name: failing\nnodes:\n  - id: a\n    run: echo broken; exit 1\n"


def valid(text: str, kind: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(text)
    VALIDATOR.validate(doc)
    assert doc["schema"] == 1 and doc["kind"] == kind
    return doc


def omg(cwd: Path, *args: str) -> tuple[int, str, str]:
    done = omg_in_process(*args, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def last_line(text: str) -> str:
    lines = text.splitlines()
    assert lines, "stdout is empty"
    return lines[-1]


def test_run_and_resume_end_stdout_with_their_outcome_and_nothing_else(tmp_path: Path) -> None:
    write_graph(tmp_path, GATED, "gated.yaml")
    code, out, err = omg(tmp_path, "run", "gated.yaml", "--run-id", "g", "--no-commit",
                         "--format", "json")  # fmt: skip
    assert code == 4 and out.count("\n") == 1, out  # the one line, all else on stderr
    doc = valid(out, "outcome")
    assert doc == {
        "schema": 1, "kind": "outcome", "run_id": "g", "status": "paused", "outcome": "paused",
        "reason": "gate", "next": "decide", "gate": "ship", "cost_usd": 0.0, "exit_code": 4,
        "commands": ["omg resume g --approve ship", "omg resume g --reject ship --reason TEXT"],
        "error": None,
    }  # fmt: skip
    assert "Paused at gate 'ship'" in err and "TOTAL COST" in err
    code, out, err = omg(tmp_path, "resume", "g", "--approve", "ship", "--no-commit",
                         "--format", "json")  # fmt: skip
    doc = valid(last_line(out), "outcome")
    assert code == 0 and (doc["status"], doc["outcome"], doc["next"]) == (
        "passed",
        "passed",
        "none",
    )
    write_graph(tmp_path, FAILING, "failing.yaml")
    code, out, _ = omg(tmp_path, "run", "failing.yaml", "--run-id", "f", "--no-commit",
                       "--format", "json")  # fmt: skip
    doc = valid(last_line(out), "outcome")
    assert (code, doc["exit_code"], doc["next"]) == (1, 1, "retry_failed")
    assert doc["commands"] == ["omg resume f --retry-failed"]


def test_a_refused_run_or_resume_still_ends_with_an_outcome_line(tmp_path: Path) -> None:
    write_graph(tmp_path, GATED, "gated.yaml")
    code, out, err = omg(tmp_path, "resume", "nope", "--format", "json")
    doc = valid(last_line(out), "outcome")
    assert code == 3 and doc["exit_code"] == 3 and doc["status"] == "refused"
    assert "no run 'nope'" in doc["error"] and "no run 'nope'" in err
    code, out, _ = omg(tmp_path, "run", "gated.yaml", "--run-id", "../x", "--format", "json")
    doc = valid(last_line(out), "outcome")
    assert code == 2 and doc["exit_code"] == 2 and doc["run_id"] == "../x"
    code, out, err = omg(tmp_path, "run", "gated.yaml", "--dry-run", "--format", "json")
    assert code == 2 and "--dry-run runs no leg" in err
    code, out, err = omg(tmp_path, "status", "--format", "yaml")
    assert code == 2 and "not one of text, json" in err


def test_a_refusal_quoting_a_secret_is_masked_in_the_outcome_line(tmp_path: Path) -> None:
    secret = "sk-ant-" + "s3cr3t" * 4
    write_graph(tmp_path, GATED, "gated.yaml")
    done = omg_in_process(
        "run", "gated.yaml", "-i", secret, "--format", "json", cwd=tmp_path,
        env=clean_env(ANTHROPIC_API_KEY=secret),
    )  # fmt: skip
    doc = valid(last_line(done.stdout), "outcome")
    assert done.returncode == 2 and "must look like name=value" in doc["error"]
    assert secret not in done.stdout and secret not in done.stderr and "***" in doc["error"]


def test_status_lists_runs_and_shows_a_run_and_a_node_as_json(tmp_path: Path) -> None:
    write_graph(tmp_path, GATED, "gated.yaml")
    write_graph(tmp_path, FAILING, "failing.yaml")
    omg(tmp_path, "run", "gated.yaml", "--run-id", "g", "--no-commit")
    omg(tmp_path, "run", "failing.yaml", "--run-id", "f", "--no-commit")
    (tmp_path / ".omg" / "runs" / "never").mkdir()
    (tmp_path / ".omg" / "runs" / "not a run").mkdir()
    code, out, _ = omg(tmp_path, "status", "--format", "json")
    doc = valid(out, "runs")
    assert code == 0 and doc["runs_dir"] == ".omg/runs" and doc["remote"] is None
    by_id = {r["run_id"]: r for r in doc["runs"]}
    assert by_id["g"]["status"] == "paused" and by_id["g"]["paused_at"] == "ship"
    assert by_id["g"]["derived"] == "paused at gate ship" and by_id["g"]["legs"] == 1
    assert by_id["f"]["status"] == "failed" and by_id["f"]["reason"] == "failed"
    assert by_id["never"]["status"] == "never_started"
    assert by_id["'not a run'"]["status"] == "not_a_run"
    code, out, _ = omg(tmp_path, "status", "f", "--format", "json")
    run = valid(out, "run")
    assert run["next"] == {"step": "retry_failed", "commands": ["omg resume f --retry-failed"]}
    assert [(n["id"], n["verdict"], n["cause"]) for n in run["nodes"]] == [
        ("a", "FAIL", "nonzero_exit")
    ]
    assert [(e["node_id"], e["leg"], e["verdict"]) for e in run["executions"]] == [("a", 1, "FAIL")]
    code, out, _ = omg(tmp_path, "status", "g", "--node", "build", "--format", "json")
    node = valid(out, "node")
    assert (node["node_kind"], node["verdict"], node["runtime"]) == ("shell", "PASS", None)
    assert [e["event"] for e in node["executions"]] == ["node_passed"]
    assert node["output"] == ".omg/runs/g/artifacts/build.out"
    code, out, _ = omg(tmp_path, "status", "g", "--node", "ship", "--format", "json")
    assert valid(out, "node")["verdict"] is None


def test_status_of_an_empty_runs_directory_is_an_empty_list(tmp_path: Path) -> None:
    code, out, _ = omg(tmp_path, "status", "--format", "json")
    assert code == 0 and valid(out, "runs")["runs"] == []


def test_status_fetch_as_json_reads_a_remotes_runs(tmp_path: Path) -> None:
    bare = tmp_path / "origin.git"
    pygit2.init_repository(str(bare), bare=True)
    work = tmp_path / "work"
    repo = pygit2.init_repository(str(work))
    sig = pygit2.Signature("t", "t@example.com")
    repo.create_commit("HEAD", sig, sig, "init", repo.TreeBuilder().write(), [])
    write_graph(work, GATED, "gated.yaml")
    code, _, err = omg(work, "run", "gated.yaml", "--run-id", "g", "--push", str(bare))
    assert code == 4, err
    laptop = tmp_path / "laptop"
    pygit2.init_repository(str(laptop))
    code, out, err = omg(laptop, "status", "--fetch", str(bare), "--format", "json")
    doc = valid(out, "runs")
    assert code == 0 and doc["remote"] == str(bare) and doc["runs_dir"] is None, err
    [entry] = doc["runs"]
    head = str(pygit2.Repository(str(bare)).references["refs/heads/omg/runs/g"].target)
    assert (entry["run_id"], entry["status"], entry["head"]) == ("g", "paused", head)
    code, out, _ = omg(laptop, "status", "--fetch", str(bare), "g", "--format", "json")
    run = valid(out, "run")
    assert run["paused_at"] == "ship" and run["head"] == head and run["remote"] == str(bare)


def test_every_field_of_a_summary_and_an_outcome_is_described() -> None:
    for kind in ("summary", "outcome", "node"):
        props = SCHEMA["$defs"][kind]["properties"]
        bare = [
            k for k, v in props.items() if "description" not in v and k not in ("schema", "kind")
        ]
        assert not bare, (kind, bare)
    assert set(SCHEMA["$defs"]["outcome"]["required"]) >= {
        "run_id", "status", "outcome", "next", "gate", "cost_usd", "exit_code"
    }  # fmt: skip
