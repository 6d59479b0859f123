"""A pull request from a fork, reviewed on a writer's `/omg review`: its own event runs nothing
and says how; the comment's job runs the base's graph on the fork's head (fetched as GitHub
serves it, ``refs/pull/<n>/head``), offers the lane's work as a branch of the base repository
linked from the sticky comment, and pushes nothing to the fork; a reader is refused; a later
push is superseded at the next writer's command; and no leg of a fork's run starts the next
one by itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pygit2

from .kit import READ_TOKEN, Repo
from .stand_in import SHIPPED
from .test_pr_loop import replies, sticky
from .test_two_jobs_resume import two_jobs

#: The base's graph: a lane works on the head, then a gate.
BASE_GRAPH = """\
name: pr
nodes:
  - id: build
    run: cat code.txt > built.txt && echo built
    worktree: lane
  - id: ok
    type: gate
    depends_on: [build]
"""
#: What the fork would have the graph be: never run, since the base's graph judges the PR.
FORKS_GRAPH = """\
name: pr
nodes:
  - id: forked
    run: echo the fork's own graph ran
"""
#: Two nodes, one leg each when a leg may run one node.
TWO_STEPS = """\
name: pr
nodes:
  - id: first
    run: echo first
  - id: second
    depends_on: [first]
    run: echo second
"""
GRAPH_FILE = "graphs/pr.yaml"

Make = Callable[[str], Repo]


def review(gh: Repo, login: str = "Codertocat", association: str = "OWNER", head: str = "") -> Any:
    """A ``/omg review`` comment (bound to ``head``, when given) on PR 2 by ``login``, shaped
    as GitHub sends one on a pull request."""
    body = f"/omg review {head}".strip()
    return gh.comment_event(2, body, login, association, shape="issue_comment.created.pull_request")


def fork_pr(gh: Repo, files: dict[str, str]) -> str:
    return gh.push_pr(2, files, fork=True)


def origin_refs(gh: Repo) -> dict[str, str]:
    repo = pygit2.Repository(str(gh.origin))
    return {name: str(repo.references[name].target) for name in repo.references}


def test_a_forks_own_event_runs_nothing_and_says_how_to_get_a_review(github: Make) -> None:
    gh = github(BASE_GRAPH)
    fork_pr(gh, {"code.txt": "v1\n"})
    event = gh.pr_event("opened", 2)
    event["pull_request"]["head"]["repo"]["full_name"] = "someone/Hello-World"
    job = gh.run("pull_request", event, token=READ_TOKEN)
    assert job.rc == 0, job.stderr
    said = "a person with write access can comment `/omg review`"
    assert said in job.stderr and "/omg review" in job.summary
    assert gh.run_branches() == [] and gh.api.comments == []


def test_a_writers_review_runs_the_base_graph_on_the_forks_head_and_offers_the_lane(
    github: Make,
) -> None:
    gh = github(BASE_GRAPH)
    head = fork_pr(gh, {"code.txt": "from the fork\n", GRAPH_FILE: FORKS_GRAPH})
    before = origin_refs(gh)
    assert "refs/heads/feature" not in before, "the fork's branch is in the fork, not here"
    job = gh.run("issue_comment", review(gh))
    assert job.rc == 0, job.stderr
    rid = f"pr-2-pr-{head[:7]}"
    assert job.outputs["run-id"] == rid and job.outputs["status"] == "paused", job.stderr
    state = gh.run_state(rid)
    pr = state["pull_request"]
    assert pr["head_sha"] == head and pr["fork"] is True and pr["base_sha"] == gh.main
    assert pr["graph_change"]["files"] == [GRAPH_FILE]  # reported, never run
    assert gh.node_starts(rid) == ["build"]  # the base's graph, not the fork's
    # the lane started at the fork's head, and its work is a branch of the base repository
    lane = f"omg/work/{rid}/lane"
    repo = pygit2.Repository(str(gh.origin))
    work = repo.revparse_single(f"refs/heads/{lane}").peel(pygit2.Commit)
    assert work.tree["built.txt"].data == b"from the fork\n"
    assert head in {str(c.id) for c in repo.walk(work.id)}
    body = sticky(gh)
    assert f"/compare/{head}...{lane})" in body and f"`{lane}`" in body
    # nothing went to the fork: its head is where the fork left it, no branch of it was made
    after = origin_refs(gh)
    assert after["refs/pull/2/head"] == head and "refs/heads/feature" not in after
    assert gh.api.calls("GET", r"/pulls/2$"), "the pull request is read through the API"


def test_a_readers_review_is_refused_and_nothing_runs(github: Make) -> None:
    gh = github(BASE_GRAPH)
    fork_pr(gh, {"code.txt": "v1\n"})
    # the payload may say MEMBER: GitHub's permission API says read, and that decides
    for login, association in (("reader", "MEMBER"), ("stranger", "NONE")):
        job = gh.run("issue_comment", review(gh, login, association))
        assert job.rc == 0, job.stderr
        assert "refused" in job.stderr and job.outputs["status"] == "skipped"
    assert gh.run_branches() == []
    said = replies(gh)
    assert len(said) == 2 and all("omg refused `/omg review`" in r for r in said)
    assert "read access" in said[0] and "nothing runs" in said[0]
    assert not any(c for c in gh.api.comments if "omg:sticky" in c["body"])


def test_a_later_fork_push_is_superseded_at_the_next_writers_review(github: Make) -> None:
    gh = github(BASE_GRAPH)
    first = fork_pr(gh, {"code.txt": "v1\n"})
    assert gh.run("issue_comment", review(gh)).outputs["status"] == "paused"
    old = f"pr-2-pr-{first[:7]}"
    second = fork_pr(gh, {"code.txt": "v2\n"})
    event = gh.pr_event("synchronize", 2, before=first)
    event["pull_request"]["head"]["repo"]["full_name"] = "someone/Hello-World"
    pushed = gh.run("pull_request", event, token=READ_TOKEN)  # the fork's push: read-only
    assert pushed.rc == 0 and gh.run_state(old)["status"] == "paused"
    assert f"/omg review @{second}" in pushed.summary  # the command bound to the new head
    # a writer who looked at the first head: the fork pushed since, so nothing runs
    stale = gh.run("issue_comment", review(gh, "octocat", "COLLABORATOR", f"@{first[:7]}"))
    assert stale.rc == 0 and len(gh.run_branches()) == 1
    assert "it moved since" in replies(gh)[-1]
    job = gh.run("issue_comment", review(gh, "octocat", "COLLABORATOR", f"@{second}"))
    assert job.rc == 0, job.stderr
    new = f"pr-2-pr-{second[:7]}"
    assert job.outputs["run-id"] == new
    assert gh.run_state(old)["status"] == "superseded"
    assert gh.run_state(old)["superseded_by"] == second
    assert gh.run_state(new)["pull_request"]["head_sha"] == second


def test_a_fork_run_out_of_time_waits_for_a_writer_and_continues_on_review(
    github: Make,
) -> None:
    gh = github(TWO_STEPS)
    head = fork_pr(gh, {"code.txt": "v1\n"})
    one = {"OMG_MAX_NODES": "1"}
    job = gh.run("issue_comment", review(gh), extra=one)
    assert job.rc == 0, job.stderr
    rid = f"pr-2-pr-{head[:7]}"
    assert job.outputs["status"] == "paused" and job.outputs["next"] == "none", job.outputs
    assert gh.api.calls("POST", "dispatches") == [] and gh.api.runs == []
    assert "a writer comments `/omg review` (or `/omg retry`) to continue" in sticky(gh)
    assert gh.node_starts(rid) == ["first"]
    again = gh.run("issue_comment", review(gh, "octocat", "COLLABORATOR"), extra=one)
    assert again.rc == 0, again.stderr
    assert gh.node_starts(rid) == ["first", "second"] and again.outputs["status"] == "passed"
    assert gh.api.calls("POST", "dispatches") == []


def test_no_shipped_or_init_workflow_triggers_on_pull_request_target() -> None:
    """A guard: ``pull_request_target`` runs with secrets and a write token on an event any
    fork can cause; a fork's pull request is reviewed on a writer's comment instead. (The
    templates hold placeholders `omg init` fills, so their text is read, not their YAML.)"""
    templates = Path(__file__).resolve().parents[2] / "omg" / "templates"
    files = [*SHIPPED.glob("*.yml"), *templates.glob("*.yml")]
    assert len(files) >= 8, files
    for path in files:
        code = [ln.split("#", 1)[0] for ln in path.read_text().splitlines()]
        assert not any("pull_request_target" in ln for ln in code), path


def test_a_writers_review_of_a_fork_in_two_jobs_lands_the_run_and_offers_the_lane(
    github: Make, tmp_path: Path
) -> None:
    """As the shipped resume workflow runs it: the run job (a read-only token) runs the fork's
    head and hands off; the publish job plans the comment itself and lands the verified leg."""
    gh = github(BASE_GRAPH)
    head = fork_pr(gh, {"code.txt": "from the fork\n", GRAPH_FILE: FORKS_GRAPH})
    ran, done = two_jobs(gh, "issue_comment", review(gh), tmp_path)
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    rid = f"pr-2-pr-{head[:7]}"
    assert ran.outputs["run-id"] == rid and gh.run_state(rid)["status"] == "paused"
    assert gh.run_state(rid)["pull_request"]["fork"] is True
    assert gh.node_starts(rid) == ["build"]  # the base's graph, not the fork's
    lane = f"omg/work/{rid}/lane"
    work = pygit2.Repository(str(gh.origin)).revparse_single(f"refs/heads/{lane}")
    assert work.peel(pygit2.Commit).tree["built.txt"].data == b"from the fork\n"
    assert f"`{lane}`" in sticky(gh)
    assert origin_refs(gh)["refs/pull/2/head"] == head


def test_a_readers_review_of_a_fork_in_two_jobs_runs_nothing(
    github: Make, tmp_path: Path
) -> None:
    gh = github(BASE_GRAPH)
    fork_pr(gh, {"code.txt": "v1\n"})
    ran, done = two_jobs(gh, "issue_comment", review(gh, "reader", "MEMBER"), tmp_path,
                         actor="reader")  # fmt: skip
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    assert gh.run_branches() == [] and ran.outputs["status"] == "skipped"
    said = replies(gh)
    assert len(said) == 1 and "omg refused `/omg review`" in said[0]


def test_a_fork_push_between_the_two_jobs_of_a_review_lands_nothing_and_refuses_nothing(
    github: Make, tmp_path: Path
) -> None:
    """The run job ran the head it read; the fork pushed before the publish job, which plans
    the new head's run: the hand-off is another run's, so nothing of it lands and no head is
    marked refused."""
    gh = github(BASE_GRAPH)
    first = fork_pr(gh, {"code.txt": "v1\n"})
    out, into = tmp_path / "up", tmp_path / "down"
    ran = gh.run("issue_comment", review(gh), token=READ_TOKEN, run_id=8400,
                 command=("leg", "--hand-off", str(out)))  # fmt: skip
    assert ran.rc == 0 and ran.outputs["run-id"] == f"pr-2-pr-{first[:7]}", ran.stderr
    gh.api.upload(8400, "omg-handoff-a8400", out)
    gh.api.download(8400, "omg-handoff-a8400", into)
    second = fork_pr(gh, {"code.txt": "v2\n"})
    done = gh.run("issue_comment", review(gh), run_id=8400, command=("publish", str(into)))
    assert done.rc == 0, done.stderr
    assert "refused" not in done.stderr
    assert all(s["state"] != "failure" for h in (first, second)
               for s in gh.api.statuses.get(h, []))  # fmt: skip
    assert gh.run_branches() == []
