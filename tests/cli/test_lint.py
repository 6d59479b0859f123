"""`omg lint` and `omg graph` through the real console entry point: exit codes and formats."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "graphs"


def test_lint_exit_codes_are_0_valid_1_invalid_2_usage(omg, tmp_path: Path) -> None:
    ok = omg("lint", str(ROOT / "graphs"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "demo.yaml: valid" in ok.stdout

    bad = omg("lint", str(CASES / "invalid" / "codex_allowed_tools.yaml"))
    assert bad.returncode == 1
    assert 'error: node "impl": runtime: codex with allowed_tools' in bad.stdout

    missing = omg("lint", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr and missing.stderr.startswith("omg:")

    wrong = omg("lint", "--format", "xml", str(ROOT / "graphs"))
    assert wrong.returncode == 2 and "text, json, github" in wrong.stderr


def test_lint_formats_json_and_github_annotations(omg) -> None:
    bad = CASES / "invalid" / "codex_allowed_tools.yaml"
    as_json = omg("lint", "--format", "json", str(bad))
    findings = json.loads(as_json.stdout)
    (err,) = [f for f in findings if f["severity"] == "error"]
    assert err["node"] == "impl" and err["line"] == 7 and err["code"] == "codex-field"

    gh = omg("lint", "--format", "github", str(bad))
    assert gh.stdout.startswith(f"::error file={bad},line=7")


def test_graph_prints_mermaid_with_the_feedback_arc_dashed(omg) -> None:
    res = omg("graph", str(ROOT / "graphs" / "review-loop.yaml"))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("flowchart TD")
    assert '-. "max 2" .->' in res.stdout
