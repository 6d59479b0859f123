"""The commit status `omg/<graph>` on the head a run judges, set by every leg of the run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from omg.github.commitstatus import CHANGED, LIMIT, changing, clip, describe

from . import openapi
from .kit import Job, Repo
from .stand_in import Fault

GATED_CHAIN = """\
name: pr
nodes:
  - id: build
    run: echo built
  - id: ok
    type: gate
    depends_on: [build]
  - id: a
    depends_on: [ok]
    run: echo a
  - id: b
    depends_on: [a]
    run: echo b
  - id: c
    depends_on: [b]
    run: echo c
"""

FAILS_LATE = GATED_CHAIN.replace("run: echo c", "run: exit 3")

Make = Callable[[str], Repo]
CONTEXT = "omg/pr"


def shown(gh: Repo, head: str) -> tuple[str, str, str]:
    got = gh.api.status(head, CONTEXT)
    assert got is not None, f"no {CONTEXT} status on {head[:7]}"
    return got["state"], got["description"], got.get("target_url", "")


def run_url(job: Job) -> str:
    return (
        f"{job.env['GITHUB_SERVER_URL']}/Codertocat/Hello-World/actions/runs/"
        + job.env["GITHUB_RUN_ID"]
    )


def through_dispatches(gh: Repo, first: Job, one: dict[str, str]) -> list[Job]:
    legs = [first]
    while legs[-1].outputs["next"] == "dispatch":
        run = gh.api.runs[-1]
        legs.append(
            gh.run(
                "workflow_dispatch", gh.dispatch_event(run["inputs"]), extra=one, run_id=run["id"]
            )
        )
    return legs


def test_status_follows_the_pr_through_gate_approval_and_dispatched_legs(github: Make) -> None:
    gh = github(GATED_CHAIN)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    opened = gh.run("pull_request", gh.pr_event("opened", 2))
    assert opened.outputs["status"] == "paused", opened.stderr
    state, text, url = shown(gh, head)
    ref7 = opened.outputs["state-ref"][:7]
    assert state == "pending"
    assert (
        text
        == f"paused at gate ok: comment /omg approve ok @{ref7} or /omg reject ok @{ref7} <reason>"
    )
    assert url == run_url(opened)
    # the comment leg runs on main: its own check never reaches the PR, the status does
    comment = gh.comment_event(2, f"/omg approve ok @{ref7}", "octocat", "MEMBER")
    one = {"OMG_MAX_NODES": "1"}
    approved = gh.run("issue_comment", comment, actor="octocat", extra=one)
    assert approved.outputs["next"] == "dispatch", approved.stderr
    assert shown(gh, head) == (
        "pending",
        "continuing: the next leg is dispatched",
        run_url(approved),
    )
    legs = through_dispatches(gh, approved, one)
    assert [j.outputs["status"] for j in legs] == ["continuing", "continuing", "passed"]
    assert shown(gh, head) == ("success", "passed", run_url(legs[-1]))
    # every leg set pending while it ran, then its end state: on the judged head only
    states = [s["state"] for s in gh.api.statuses[head]]
    assert states == ["pending", "pending"] + ["pending", "pending"] * 2 + ["pending", "success"]
    assert set(gh.api.statuses) == {head}


def test_a_failure_in_a_dispatched_leg_turns_the_status_red(github: Make) -> None:
    gh = github(FAILS_LATE)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    opened = gh.run("pull_request", gh.pr_event("opened", 2))
    ref7 = opened.outputs["state-ref"][:7]
    comment = gh.comment_event(2, f"/omg approve ok @{ref7}", "octocat", "MEMBER")
    one = {"OMG_MAX_NODES": "1"}
    legs = through_dispatches(gh, gh.run("issue_comment", comment, actor="octocat", extra=one), one)
    assert legs[-1].outputs["status"] == "failed" and legs[-1].rc == 1
    state, text, url = shown(gh, head)
    assert state == "failure" and text.startswith("failed") and url == run_url(legs[-1])


def test_a_superseded_head_gets_a_final_status_saying_so(github: Make) -> None:
    gh = github(GATED_CHAIN)
    old = gh.push_pr(2, {"code.txt": "v1\n"})
    gh.run("pull_request", gh.pr_event("opened", 2))
    assert shown(gh, old)[0] == "pending"
    new = gh.push_pr(2, {"code.txt": "v2\n"})
    job = gh.run("pull_request", gh.pr_event("synchronize", 2, before=old))
    assert job.outputs["status"] == "paused", job.stderr
    state, text, _ = shown(gh, old)
    assert state == "error" and text.startswith("superseded")
    assert shown(gh, new)[0] == "pending"


def test_descriptions_stay_within_githubs_limit_and_plain() -> None:
    hostile = "gate\u202e\nname" + "x" * 300
    state, text = describe("paused", gate=hostile, ref="a" * 40)
    assert state == "pending" and len(text) == LIMIT and text.endswith("…")
    assert "\n" not in text and "\u202e" not in text
    assert clip("a\r\n\tb") == "a b"
    table = {
        "passed": "success",
        "failed": "failure",
        "superseded": "error",
        "paused": "pending",
        "continuing": "pending",
        "running": "pending",
    }
    assert {s: describe(s, gate="g")[0] for s in table} == table
    # a PR that changes its graph: said first, so no cut drops it
    changed = changing(text)
    assert changed.startswith(CHANGED + " · paused at gate") and len(changed) == LIMIT


def test_a_status_whose_first_try_may_have_landed_is_sent_again_harmlessly(github: Make) -> None:
    gh = github(GATED_CHAIN)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    gh.api.faults.append(Fault("POST", r"/statuses/", "502-after", times=2))
    job = gh.run("pull_request", gh.pr_event("opened", 2))
    assert job.rc == 0 and job.outputs["status"] == "paused", job.stderr
    # both uncertain tries landed and were repeated: GitHub shows the latest, the same
    assert shown(gh, head)[0] == "pending" and shown(gh, head)[1].startswith("paused at gate ok")
    assert len(gh.api.calls("POST", r"/statuses/")) == 4


def test_the_rest_description_check_is_able_to_fail() -> None:
    ok = openapi.check("POST", "/repos/o/r/statuses/" + "a" * 40, {"state": "pending"})
    assert ok == "POST /repos/{owner}/{repo}/statuses/{sha}"
    with pytest.raises(AssertionError, match="is not one of"):
        openapi.check("POST", "/repos/o/r/statuses/" + "a" * 40, {"state": "green"})
    with pytest.raises(AssertionError, match="no operation"):
        openapi.check("POST", "/repos/o/r/statuses", {"state": "pending"})
    with pytest.raises(AssertionError, match="required"):
        openapi.check("PATCH", "/repos/o/r/issues/comments/5", {"text": "x"})


def test_a_workflow_without_statuses_write_warns_and_its_legs_go_on(github: Make) -> None:
    """GitHub answers 403 "Resource not accessible by integration" to every status a token
    without ``statuses: write`` sets: each leg says once what to add, and runs on."""
    gh = github(GATED_CHAIN)
    gh.push_pr(2, {"code.txt": "v1\n"})
    gh.api.faults.append(Fault("POST", r"/statuses/", "403", times=10_000))
    opened = gh.run("pull_request", gh.pr_event("opened", 2))
    assert opened.rc == 0 and opened.outputs["status"] == "paused", opened.stderr
    assert "Resource not accessible by integration" in opened.summary
    assert "Add `statuses: write` to the job's `permissions:`" in opened.summary
    [warning] = [a for a in opened.annotations if "status" in a and a.startswith("::warning")]
    assert "statuses: write" in warning and "omg%3A no omg/pr status" in warning
    assert len(gh.api.calls("POST", r"/statuses/")) == 1  # asked once, not at every turn
    assert gh.api.statuses == {}
    ref7 = opened.outputs["state-ref"][:7]
    comment = gh.comment_event(2, f"/omg approve ok @{ref7}", "octocat", "MEMBER")
    one = {"OMG_MAX_NODES": "1"}
    legs = through_dispatches(gh, gh.run("issue_comment", comment, actor="octocat", extra=one), one)
    assert [(j.rc, j.outputs["status"]) for j in legs] == [(0, "continuing")] * 2 + [(0, "passed")]
    assert all("statuses: write" in j.summary for j in legs)
    assert len(gh.api.calls("POST", r"/statuses/")) == 1 + len(legs)


def test_live_progress_goes_on_in_the_comment_when_statuses_are_refused(github: Make) -> None:
    gh = github(GATED_CHAIN.replace("type: gate", "run: echo ok"))
    gh.push_pr(2, {"code.txt": "v1\n"})
    gh.api.faults.append(Fault("POST", r"/statuses/", "403", times=10_000))
    job = gh.run("pull_request", gh.pr_event("opened", 2), extra={"OMG_PROGRESS_SECONDS": "0"})
    assert job.rc == 0 and job.outputs["status"] == "passed", job.stderr
    assert "live progress stopped" not in job.stderr
    # every settled node edits the comment, as with statuses; the end edits it once more
    assert len(gh.api.calls("PATCH", r"/issues/comments/")) == 5
    assert len(gh.api.calls("POST", r"/statuses/")) == 1
    assert job.summary.count("The commit status `omg/pr` was not set") == 1
