"""`omg init`: the workflows and a starter graph written into a repository, pinned, passing
omg lint, zizmor and actionlint; a file that differs is never overwritten."""

from __future__ import annotations

from pathlib import Path

import pygit2
from kit import omg_in_process

from omg.cli import exits
from tests.workflows.test_hygiene import ROOT, actionlint, load, zizmor

PIN = "acme/omg@" + "1" * 40
WORKFLOWS = ("omg-review.yml", "omg-resume.yml", "omg-lint.yml")


def init(repo: Path, *args: str) -> tuple[int, str]:
    done = omg_in_process("init", str(repo), *args, cwd=repo)
    return done.returncode, done.stdout + done.stderr


def test_init_into_an_empty_repository_writes_pinned_workflows_that_pass_every_check(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo))
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.PASSED, out
    assert "wrote      .github/workflows/omg-review.yml" in out and "secret" in out
    flows = [repo / ".github" / "workflows" / name for name in WORKFLOWS]
    for flow in flows[:2]:
        doc = load(flow)
        [step] = [s for s in doc["jobs"]["leg"]["steps"] if s.get("id") == "omg"]
        assert step["uses"] == PIN
        assert doc["jobs"]["leg"]["permissions"]["statuses"] == "write"
    assert f"git+https://github.com/acme/omg@{'1' * 40}" in flows[2].read_text()
    lint = omg_in_process("lint", "graphs/", ".github/workflows/", cwd=repo)  # as omg-lint.yml
    assert lint.returncode == 0, lint.stdout + lint.stderr
    done = zizmor(flows)
    assert done.returncode == 0, done.stdout + done.stderr
    done = actionlint([str(f) for f in flows])
    assert done.returncode == 0, done.stdout + done.stderr
    # run again: nothing differs, nothing is written
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.PASSED and out.count("unchanged") == 5, out


def test_init_keeps_a_hand_edited_workflow_and_says_how_to_compare(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    pygit2.init_repository(str(repo))
    mine = repo / ".github" / "workflows" / "omg-review.yml"
    mine.parent.mkdir(parents=True)
    mine.write_text("name: my own review\n")
    rc, out = init(repo, "--uses", PIN)
    assert rc == exits.REFUSED, out
    assert mine.read_text() == "name: my own review\n"
    assert "kept       .github/workflows/omg-review.yml: it differs" in out
    compare = f"omg init --uses {PIN} --show .github/workflows/omg-review.yml | diff -u"
    assert compare in out
    assert (repo / ".github" / "workflows" / "omg-resume.yml").is_file()  # the rest written
    shown = omg_in_process(
        "init", "--uses", PIN, "--show", ".github/workflows/omg-review.yml", cwd=repo
    )
    assert shown.returncode == 0 and f"uses: {PIN}" in shown.stdout


def test_init_refuses_a_pin_that_is_not_a_full_commit(tmp_path: Path) -> None:
    rc, out = init(tmp_path, "--uses", "acme/omg@v1")
    assert rc == exits.USAGE and "40-character commit" in out
    assert not (tmp_path / ".github").exists()


def test_the_templates_are_the_shipped_workflows_but_for_the_pin() -> None:
    """omg init writes what this repository runs: the shipped review and resume workflows with
    `uses: ./` replaced by the pinned action."""
    from omg.cli.init import Pin, render

    pin = Pin("acme/omg", "1" * 40)
    for name in ("omg-resume.yml", "omg-review.yml"):
        shipped = load(ROOT / ".github" / "workflows" / name)
        made = load(render(name, pin))
        for doc in (shipped, made):
            for step in doc["jobs"]["leg"]["steps"]:
                if step.get("id") == "omg":
                    step.pop("uses")
            doc["on"].get("pull_request", {}).pop("paths-ignore", None)
        assert made == shipped, name
