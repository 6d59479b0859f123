"""The test kit itself: its scrub lets no credential through, its in-process CLI leaves no trace."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from kit import FakeRunner, clean_env, omg_in_process, resume_graph, run_graph

from omg.leg.decisions import Decision


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "OMG_GIT_TOKEN",
        "RUNNER_TEMP",
        "CI",
    ],
)
def test_the_scrub_drops_every_credential_and_ci_setting(name: str) -> None:
    assert name not in clean_env({name: "x", "PATH": "/bin"})
    assert clean_env({name: "x"}, **{name: "given"})[name] == "given", "extra is the test's own"


def test_the_scrub_keeps_the_rest() -> None:
    assert clean_env({"PATH": "/bin", "HOME": "/h", "LANG": "C"}) == {
        "PATH": "/bin",
        "HOME": "/h",
        "LANG": "C",
    }


def test_the_in_process_cli_restores_environment_cwd_and_argv(tmp_path: Path) -> None:
    import omg.cli.app  # noqa: F401  (its import sets TYPER_USE_RICH once: not the call)

    before = (dict(os.environ), Path.cwd(), list(sys.argv))
    done = omg_in_process("status", "--runs-dir", "nowhere", cwd=tmp_path, env={"PATH": "/bin"})
    assert (dict(os.environ), Path.cwd(), list(sys.argv)) == before
    assert done.returncode == 0, done.stderr


def test_the_in_process_cli_reports_a_refusal_as_the_cli_does(tmp_path: Path) -> None:
    done = omg_in_process("resume", "nope", "--runs-dir", "runs", "--no-commit", cwd=tmp_path)
    assert done.returncode == 3 and "no run 'nope'" in done.stderr


GATED = """\
name: gated
nodes:
  - id: a
    prompt: "work"
  - id: ship
    type: gate
    depends_on: [a]
  - id: after
    depends_on: [ship]
    run: echo shipped
"""


def test_run_then_resume_in_process_through_a_gate(tmp_path: Path) -> None:
    fake = FakeRunner({"a": ["the work"]})
    first = run_graph(tmp_path, GATED, runners={"claude": fake})
    assert first.outcome == "paused" and first.state()["paused_at"] == "ship"
    refused = resume_graph(tmp_path)
    assert refused.error is not None and "paused at gate 'ship'" in str(refused.error)
    done = resume_graph(tmp_path, decision=Decision("ship", True, "ann"))
    assert done.outcome == "passed", done.error
    assert done.artifact("after") == "shipped\n"
    assert fake.texts() == ["work"], "a passed node never runs again"
