"""`omg stats` and `omg report --html` at the command line: what they refuse and how (a usage
error, a refusal — never a traceback), and where a run's page is said to be in GitHub's step
summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from gfm import read
from kit import clean_env, omg_in_process, run_graph

from omg.cli.stats import since_time

ROOT = Path(__file__).resolve().parents[2]
LOOP = """\
name: tiny
nodes:
  - {id: a, run: "true"}
"""


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (("stats", "--format", "yaml"), 2, "--format 'yaml' is not one of text, json, markdown"),
        (("stats", "--since", "last tuesday"), 2, "--since 'last tuesday' is not a date"),
        (("stats", "--compare", "abc", "defg"), 2, "give at least 4 characters"),
        (("stats", "--compare", "abcd", "defg"), 2, "names no version; the versions: none"),
    ],
)
def test_stats_says_what_is_wrong_with_its_arguments(
    args: tuple[str, ...], code: int, said: str, tmp_path: Path
) -> None:
    import pygit2

    pygit2.init_repository(str(tmp_path))
    done = omg_in_process(*args, cwd=tmp_path)
    assert (done.returncode, said in done.stderr) == (code, True), done.stderr


def test_stats_outside_a_repository_is_refused(tmp_path: Path) -> None:
    done = omg_in_process("stats", cwd=tmp_path)
    assert done.returncode == 3 and "runs inside a git repository" in done.stderr


def test_stats_of_no_runs_says_so(tmp_path: Path) -> None:
    import pygit2

    pygit2.init_repository(str(tmp_path))
    done = omg_in_process("stats", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("omg stats: 0 run(s) on the local")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("7d", "2026-11-24T12:00:00+00:00"),
        ("12h", "2026-12-01T00:00:00+00:00"),
        ("2026-11-30", "2026-11-30T00:00:00+00:00"),  # a date is UTC midnight
        ("2026-11-30T08:00:00+02:00", "2026-11-30T08:00:00+02:00"),
    ],
)
def test_since_takes_a_date_a_time_or_a_span_back(text: str, want: str) -> None:
    from datetime import UTC, datetime

    assert since_time(text, datetime(2026, 12, 1, 12, tzinfo=UTC)).isoformat() == want


def test_report_refuses_a_run_that_is_not_there_and_a_page_it_cannot_write(tmp_path: Path) -> None:
    missing = omg_in_process("report", "nope", "--html", "p.html", cwd=tmp_path)
    assert missing.returncode == 3 and "no run 'nope'" in missing.stderr
    bad_id = omg_in_process("report", "../x", "--html", "p.html", cwd=tmp_path)
    assert bad_id.returncode in (2, 3) and "Traceback" not in bad_id.stderr
    ran = run_graph(tmp_path, LOOP)
    assert ran.error is None
    runs = str(tmp_path / "runs")
    (tmp_path / "taken").write_text("a file, not a directory")
    blocked = omg_in_process(
        "report", "r1", "--html", str(tmp_path / "taken" / "p.html"), "--runs-dir", runs,
        cwd=tmp_path,
    )  # fmt: skip
    assert blocked.returncode == 3 and "cannot write" in blocked.stderr


def test_report_in_actions_names_the_artifact_in_the_step_summary(tmp_path: Path) -> None:
    assert run_graph(tmp_path, LOOP).error is None
    summary = tmp_path / "summary.md"
    summary.write_text("### the leg's report\n")
    env = clean_env(
        GITHUB_STEP_SUMMARY=str(summary), GITHUB_EVENT_NAME="pull_request",
        GITHUB_REPOSITORY="octo/repo", GITHUB_RUN_ID="77", GITHUB_SERVER_URL="https://github.com",
    )  # fmt: skip
    page = tmp_path / "omg-run-r1.html"
    done = omg_in_process(
        "report", "r1", "--html", str(page), "--runs-dir", str(tmp_path / "runs"),
        "--artifact", "omg-run-r1", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the step summary names the artifact omg-run-r1" in done.stdout
    said = read(summary.read_text())
    assert said.hrefs() == ["https://github.com/octo/repo/actions/runs/77#artifacts"]
    assert said.codes == ["omg-run-r1", "omg-run-r1.html"]
    assert page.read_text().startswith("<!DOCTYPE html>")
    outside = omg_in_process(
        "report", "r1", "--html", str(page), "--runs-dir", str(tmp_path / "runs"),
        "--artifact", "x", cwd=tmp_path,
    )  # fmt: skip
    assert "not in GitHub Actions" in outside.stdout
