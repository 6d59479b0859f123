"""`omg status --fetch REMOTE [RUN]` on a laptop: the runs CI left on the remote's run branches,
with their derived status, and one run's ledger — changing nothing local but refs/remotes/."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pygit2
from kit import omg_in_process

from .kit import TOKEN, Job, Repo
from .test_commit_status import GATED_CHAIN

Make = Callable[[str], Repo]


def local_view(clone: Path) -> tuple[dict[str, str], list[str]]:
    """Every ref but the remote-tracking ones, and every file of the working tree."""
    repo = pygit2.Repository(str(clone))
    refs = {
        name: str(repo.references[name].target)
        for name in repo.references
        if not name.startswith("refs/remotes/")
    }
    files = sorted(str(p.relative_to(clone)) for p in clone.rglob("*") if ".git" not in p.parts)
    return refs, files


def pr_runs(gh: Repo) -> tuple[str, Job]:
    """Two runs of PR 2 in CI: the first head's (superseded), and the second's, its gate
    approved by a comment and its next leg dispatched; the first head and the paused leg."""
    old = gh.push_pr(2, {"code.txt": "v1\n"})
    gh.run("pull_request", gh.pr_event("opened", 2))
    gh.push_pr(2, {"code.txt": "v2\n"})
    paused = gh.run("pull_request", gh.pr_event("synchronize", 2, before=old))
    ref7 = paused.outputs["state-ref"][:7]
    cmt = gh.comment_event(2, f"/omg approve ok @{ref7}", "octocat", "MEMBER")
    cont = gh.run("issue_comment", cmt, actor="octocat", extra={"OMG_MAX_NODES": "1"})
    assert cont.outputs["next"] == "dispatch", cont.stderr
    return old, paused


def laptop_of(gh: Repo, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A clone of main on a laptop, and an environment that may fetch from the remote."""
    laptop = tmp_path / "laptop"
    gh.checkout(laptop, "refs/heads/main", None)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_SERVER_URL": gh.server.url.rsplit("/", 1)[0],
    }
    return laptop, env


def test_status_fetch_lists_the_remotes_runs_and_shows_one_ledger(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED_CHAIN)
    old, paused = pr_runs(gh)
    gh.push_pr(3, {"code.txt": "v3\n"}, branch="other")
    passed = gh.run(
        "workflow_dispatch", gh.dispatch_event({"graph": "graphs/pr.yaml", "run-id": "by-hand"})
    )
    assert passed.outputs["status"] == "paused", passed.stderr  # this graph has a gate

    laptop, env = laptop_of(gh, tmp_path)
    before = local_view(laptop)
    done = omg_in_process("status", "--fetch", "origin", cwd=laptop, env=env)
    assert done.returncode == 0, done.stderr
    lines = {ln.split()[0]: ln for ln in done.stdout.splitlines()[1:]}
    old_rid, new_rid = f"pr-2-pr-{old[:7]}", paused.outputs["run-id"]
    assert set(lines) == {old_rid, new_rid, "by-hand"}
    assert "superseded" in lines[old_rid]
    assert "waiting for its next leg" in lines[new_rid]
    assert "paused at gate ok" in lines["by-hand"]
    one = omg_in_process("status", "--fetch", "origin", new_rid, cwd=laptop, env=env)
    assert one.returncode == 0, one.stderr
    assert "status on origin: waiting for its next leg (2 leg(s)" in one.stdout
    assert "build" in one.stdout and "PASS" in one.stdout
    # nothing local changed but the remote-tracking refs: no branch, no file, no .omg
    assert local_view(laptop) == before
    refs = pygit2.Repository(str(laptop)).references
    assert f"refs/remotes/origin/omg/runs/{new_rid}" in refs
    missing = omg_in_process("status", "--fetch", "origin", "nope", cwd=laptop, env=env)
    assert missing.returncode == 3 and "origin has no run 'nope'" in missing.stderr


def test_a_fetched_run_with_an_open_leg_names_the_workflow_run_carrying_it() -> None:
    from typing import Any, cast

    from omg.cli.status import remote_derive
    from omg.state import State

    def state(**kw: Any) -> State:
        base = {"legs": [], "status": "running", "paused_at": None}
        return cast(State, {**base, **kw})

    open_leg = [{"leg": 1, "outcome": None, "ci": {"workflow_run_id": "9001"}}]
    assert remote_derive(state(legs=open_leg)) == "running in workflow run 9001"
    assert remote_derive(state(legs=[{"leg": 1, "outcome": None}])) == "running (not in CI)"
    done = [{"leg": 1, "outcome": "paused"}]
    assert remote_derive(state(legs=done, status="paused", paused_at="ok")) == "paused at gate ok"
    assert remote_derive(state(legs=done, status="passed")) == "passed"
    assert remote_derive(state(legs=done, status="failed")) == "failed"
