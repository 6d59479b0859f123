"""`omg prune --remote origin` as the nightly workflow runs it, against a remote holding runs in
every state: settled runs' refs go, running, paused and waiting runs stay whole, a lane whose
work is on no other branch stays, an open pull request's spend book and the caps' current days
stay; each removal is a compare-and-swap."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2
from kit import ScriptedClaude

from omg.git.prune import Found, Refs

from .kit import SIG, TOKEN, Repo
from .test_caps import SESSION_LIMIT

Make = Callable[[str], Repo]

GRAPH = """\
name: pr
nodes:
  - id: build
    run: echo built > out.txt
    worktree: lane
  - id: look
    run: 'true'
    worktree: other
  - id: ok
    type: gate
    depends_on: [build, look]
"""
FAILING = "name: failing\nnodes:\n  - id: a\n    run: 'false'\n"
HANGING = (
    'name: hanging\nnodes:\n  - id: h\n    run: while [ ! -f ../home/go ]; do sleep 0.05; done\n'
)
LIMITED = "name: limited\nnodes:\n  - id: impl\n    prompt: Implement it.\n"


def refs_on(gh: Repo) -> dict[str, str]:
    repo = pygit2.Repository(str(gh.origin))
    return {n: str(repo.references[n].target) for n in repo.references if "omg" in n}


def book(gh: Repo, scope: str, days_ago: float) -> None:
    """A spend book on origin as a leg leaves it, last written ``days_ago``."""
    repo = pygit2.Repository(str(gh.origin))
    when = int(time.time() - days_ago * 86400)
    sig = pygit2.Signature(SIG.name, SIG.email, when, 0)
    blob = repo.create_blob(json.dumps({"schema": 1, "scope": scope, "entries": []}).encode())
    tree = repo.TreeBuilder()
    tree.insert("spend.json", blob, pygit2.enums.FileMode.BLOB)
    oid = repo.create_commit(None, sig, sig, f"reserve ({scope})", tree.write(), [])
    repo.references.create(f"refs/omg/spend/{scope}", oid)


def test_prune_removes_settled_runs_and_stale_books_and_keeps_everything_that_may_move(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GRAPH)
    gh.main = gh.commit(
        "refs/heads/main",
        {"graphs/failing.yaml": FAILING, "graphs/hanging.yaml": HANGING,
         "graphs/limited.yaml": LIMITED},
        parent=gh.main,
    )  # fmt: skip
    # PR 2: a run superseded by a newer push, whose successor passed once approved
    old = gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    gh.push_pr(2, {"code.txt": "v2\n"})
    second = gh.run("pull_request", gh.pr_event("synchronize", 2, before=old))
    superseded, passed = first.outputs["run-id"], second.outputs["run-id"]
    gh.run("issue_comment", gh.comment_event(2, "/omg reject ok nope", "reader", "NONE"))
    approve = gh.comment_event(2, "/omg approve ok", "octocat", "MEMBER")
    assert gh.run("issue_comment", approve).outputs["status"] == "passed"
    gh.api.pulls[2]["state"] = "closed"
    # the superseded run's lane holds a commit a person kept as a branch of their own
    lane = refs_on(gh)[f"refs/heads/omg/work/{superseded}/lane"]
    gh.commit_ref("refs/heads/kept-by-hand", lane)
    # PR 3, open: a run paused at its gate
    gh.push_pr(3, {"code.txt": "v3\n"}, branch="other-feature")
    paused = gh.run("pull_request", gh.pr_event("opened", 3)).outputs["run-id"]
    # a failed run, a run waiting for a usage limit, a stale fan-out record of the passed run
    failed = gh.run(
        "workflow_dispatch", gh.dispatch_event({"graph": "graphs/failing.yaml", "run-id": "f1"})
    )
    assert failed.outputs["status"] == "failed", failed.stderr
    claude = ScriptedClaude(tmp_path / "claude")
    claude.replies([SESSION_LIMIT])
    waiting = gh.run(
        "workflow_dispatch",
        gh.dispatch_event({"graph": "graphs/limited.yaml", "run-id": "w1"}),
        extra={"OMG_CLAUDE_BIN": str(claude.bin), "OMG_LIMIT_WAIT": "3600"},
    )
    assert waiting.outputs["next"] == "wait", waiting.stderr
    gh.commit_ref(f"refs/omg/fanout/{passed}/build", refs_on(gh)[f"refs/heads/omg/runs/{passed}"])
    # spend books: a closed and an open PR's, an old day's, yesterday's and today's
    today = datetime.now(UTC).date()
    book(gh, "pr/2", 40)
    book(gh, "pr/3", 40)
    book(gh, "day/2020-01-01", 2000)
    book(gh, f"day/{today - timedelta(days=1)}", 0.5)
    book(gh, f"day/{today}", 0)
    # and a run with a leg running now
    running = gh.job(
        "workflow_dispatch",
        gh.dispatch_event({"graph": "graphs/hanging.yaml", "run-id": "h1"}),
        start=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not {"refs/omg/lease/h1", "refs/heads/omg/runs/h1"} <= set(refs_on(gh)):
            assert time.monotonic() < deadline, "the running leg never took its lease"
            time.sleep(0.05)
        before = refs_on(gh)

        # the default age keeps every run (all are younger than 30 days); old books go
        dry = gh.run("schedule", {}, command=("prune", "--remote", "origin", "--dry-run"),
                     workflow="omg-nightly.yml")  # fmt: skip
        assert dry.rc == 0, dry.stderr
        assert set(refs_on(gh)) == set(before), "a dry run removes nothing"
        first_two = dry.stdout.splitlines()[:2]
        assert first_two[0].startswith(
            "would remove refs/omg/spend/day/2020-01-01  (the day 2020-01-01 ended "
        )
        assert first_two[1] == (
            "would remove refs/omg/spend/pr/2  (pull request #2 is closed, its book last "
            "changed 40 day(s) ago)"
        )
        assert (
            "kept 6 run(s) (1 held by a live leg, 2 paused, 3 younger than the age)" in dry.stdout
        )

        since = len(gh.api.requests)
        job = gh.run("schedule", {}, command=("prune", "--remote", "origin", "--older-than", "0d"),
                     workflow="omg-nightly.yml")  # fmt: skip
        assert job.rc == 0, job.stderr
        after = refs_on(gh)
    finally:
        (running.work.parent / "home" / "go").touch()
        running.wait()
    gone = set(before) - set(after)
    left = {"refs/heads/omg/work/" + passed + "/lane"}  # below: the one lane kept
    for rid in (superseded, passed, "f1"):
        assert f"refs/heads/omg/runs/{rid}" in gone, job.stdout
        assert {r for r in after if f"/{rid}/" in r or r.endswith(f"/{rid}")} <= left, job.stdout
    assert f"refs/omg/fanout/{passed}/build" in gone and f"refs/omg/lease/{passed}" in gone
    # the passed run's lane holds its build commit on no other branch: kept, and said so
    assert f"refs/heads/omg/work/{passed}/lane" not in gone
    assert f"kept refs/heads/omg/work/{passed}/lane: holds work on no other branch" in job.stdout
    assert "its work is on other-feature" not in job.stdout  # the PR 2 lanes are on feature
    assert f"refs/heads/omg/work/{superseded}/lane" in gone  # held by kept-by-hand
    assert "its work is on kept-by-hand" in job.stdout
    # the paused, waiting and running runs are whole; the open PR's book and recent days stay
    for rid in (paused, "w1", "h1"):
        mine = {r for r in before if f"/{rid}/" in r or r.endswith(f"/{rid}")}
        assert mine and mine <= set(after), rid
    assert "refs/omg/waits/w1" in after
    assert {"refs/omg/spend/pr/2", "refs/omg/spend/day/2020-01-01"} <= gone
    assert {"refs/omg/spend/pr/3", f"refs/omg/spend/day/{today}",
            f"refs/omg/spend/day/{today - timedelta(days=1)}"} <= set(after)  # fmt: skip
    assert "kept 3 run(s) (1 held by a live leg, 2 paused)" in job.stdout
    # GitHub was asked about each pull request with a book once
    asked = [r.path for r in gh.api.requests[since:] if r.method == "GET" and "/pulls/" in r.path]
    assert sorted(asked) == [f"/repos/{gh.api.repo}/pulls/2", f"/repos/{gh.api.repo}/pulls/3"]
    # the clone's mirror of origin follows what was removed
    clone = pygit2.Repository(str(job.clone))
    assert not [r for r in clone.references if f"omg/runs/{passed}" in r]


def test_without_github_access_every_pull_request_book_is_kept_and_said_so(
    github: Make,
) -> None:
    gh = github(GRAPH)
    book(gh, "pr/7", 400)
    gh.api.set_pull(7, gh.main, "main", state="closed")
    job = gh.run("schedule", {}, command=("prune", "--remote", "origin", "--older-than", "0d"),
                 workflow="omg-nightly.yml", extra={"GITHUB_REPOSITORY": ""})  # fmt: skip
    assert job.rc == 0, job.stderr
    assert "refs/omg/spend/pr/7" in refs_on(gh)
    assert "kept 1 pull request spend book(s): without GITHUB_TOKEN and GITHUB_REPOSITORY" in (
        job.stdout
    )
    assert gh.api.calls("GET", "/pulls/") == []


def test_a_ref_that_moved_after_it_was_judged_is_not_removed(github: Make, tmp_path: Path) -> None:
    """Over smart HTTP and for a bare repository on this machine alike."""
    gh = github(GRAPH)
    one = gh.commit("refs/heads/omg/runs/r1", {"state.json": "{}"})
    two = gh.commit("refs/heads/omg/runs/r2", {"state.json": "{}"})
    clone = tmp_path / "clone"
    gh.checkout(clone, "refs/heads/main", None)
    for remote in (gh.server.url, str(gh.origin)):
        refs = Refs(pygit2.Repository(str(clone)), remote, [("GITHUB_TOKEN", TOKEN, None)])
        refs.fetch()
        judged = {f.name: f for f in refs.found()}
        assert judged["refs/heads/omg/runs/r1"].sha == one
        moved = gh.commit("refs/heads/omg/runs/r1", {"state.json": '{"x": 1}'}, parent=one)
        done, kept = refs.remove(
            [judged["refs/heads/omg/runs/r1"], judged["refs/heads/omg/runs/r2"]]
        )
        assert [f.name for f in done] == ["refs/heads/omg/runs/r2"]
        assert [f.name for f in kept] == ["refs/heads/omg/runs/r1"]
        assert refs_on(gh) == {"refs/heads/omg/runs/r1": moved}
        gh.commit_ref("refs/heads/omg/runs/r2", two)
        one = moved
    stray = Found("refs/heads/main", "refs/heads/main", gh.main, 0.0)
    try:
        refs.remove([stray])
    except Exception as exc:
        assert "not one of omg's refs" in str(exc)
    else:
        raise AssertionError("a ref outside omg's namespaces was removed")
