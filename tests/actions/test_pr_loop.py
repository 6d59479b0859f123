"""A PR review loop, job by job: opened → paused at a gate → decided by comment → passed."""

from __future__ import annotations

from collections.abc import Callable

from .kit import Repo

GATED = """\
name: pr
nodes:
  - id: build
    run: cat code.txt && echo built
    worktree: lane
  - id: ok
    type: gate
    depends_on: [build]
    description: Ship it?
  - id: ship
    depends_on: [ok]
    run: cat code.txt && echo shipped
    worktree: late
"""

TWO_GATES = """\
name: pr
nodes:
  - id: build
    run: echo built
  - id: first
    type: gate
    depends_on: [build]
  - id: middle
    depends_on: [first]
    run: echo middle
  - id: second
    type: gate
    depends_on: [middle]
  - id: last
    depends_on: [second]
    run: echo last
"""

Make = Callable[[str], Repo]


def opened(gh: Repo, graph_head: dict[str, str] | None = None) -> tuple[str, str]:
    gh.push_pr(2, graph_head or {"code.txt": "v1\n"})
    job = gh.run("pull_request", gh.pr_event("opened", 2))
    assert job.rc == 0, job.stderr
    assert job.outputs["status"] == "paused", job.stderr
    return job.outputs["run-id"], job.outputs["state-ref"]


def sticky(gh: Repo, number: int = 2) -> str:
    found = [c["body"] for c in gh.api.comments_on(number) if "omg:sticky" in c["body"]]
    assert len(found) == 1, f"expected one sticky comment, found {len(found)}"
    return found[0]


def replies(gh: Repo, number: int = 2) -> list[str]:
    return [c["body"] for c in gh.api.comments_on(number) if "omg:reply" in c["body"]]


def test_an_opened_pr_runs_to_its_gate_and_posts_the_sticky_comment(github: Make) -> None:
    gh = github(GATED)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    job = gh.run("pull_request", gh.pr_event("opened", 2))
    assert job.rc == 0, job.stderr
    rid = f"pr-2-pr-{head[:7]}"
    assert job.outputs == {
        "status": "paused",
        "run-id": rid,
        "gate": "ok",
        "next": "gate",
        "cost-usd": "0.0000",
        "state-ref": job.outputs["state-ref"],
    }
    assert gh.run_file(rid, "state.json")  # the run branch is on origin
    state = gh.run_state(rid)
    # the head it judges, and the base whose graph judges it
    assert state["pull_request"] == {
        "number": 2,
        "head_sha": head,
        "base_ref": "main",
        "base_sha": gh.main,
    }
    assert state["nodes"]["build"]["verdict"] == "PASS"
    body = sticky(gh)
    ref7 = job.outputs["state-ref"][:7]
    assert f"/omg approve ok @{ref7}" in body and f"/omg reject ok @{ref7} <reason>" in body
    assert f"judging head `{head[:7]}`" in body
    assert "class n1 paused" in body  # the Mermaid graph, coloured by status
    assert "paused at gate `ok`" in job.summary and "| `build` |" in job.summary


def test_a_member_approves_by_comment_and_the_next_leg_runs_the_pr_head(github: Make) -> None:
    gh = github(GATED)
    rid, ref = opened(gh)
    comment = gh.comment_event(2, f"/omg approve ok @{ref[:7]} looks right", "octocat", "MEMBER")
    job = gh.run("issue_comment", comment, actor="octocat")
    assert job.rc == 0, job.stderr
    assert job.outputs["status"] == "passed" and job.outputs["next"] == "none"
    state = gh.run_state(rid)
    assert state["gates"]["ok"]["by"] == "octocat"
    assert state["gates"]["ok"]["reason"] == "looks right"
    # the comment leg checked out main, yet the lane it created holds the PR's code
    assert state["nodes"]["ship"]["verdict"] == "PASS"
    assert gh.run_file(rid, "artifacts/ship.out").startswith("v1\n")
    assert state["worktrees"]["late"]["commit"] == gh.heads[2]
    assert "✅" in sticky(gh) and "passed" in sticky(gh)
    assert gh.api.calls("GET", "collaborators/octocat/permission")
    assert not replies(gh)


def test_a_reject_fails_the_run_with_the_reason_on_record(github: Make) -> None:
    gh = github(GATED)
    rid, ref = opened(gh)
    comment = gh.comment_event(2, f"/omg reject ok @{ref[:7]} breaks the API", "octocat", "MEMBER")
    job = gh.run("issue_comment", comment, actor="octocat")
    assert job.rc == 1, job.stderr
    assert job.outputs["status"] == "failed"
    state = gh.run_state(rid)
    assert state["gates"]["ok"]["decision"] == "reject"
    assert state["gates"]["ok"]["reason"] == "breaks the API"
    assert "ship" not in gh.node_starts(rid)


def test_decisions_from_a_reader_a_bot_and_a_stranger_are_refused_and_recorded(
    github: Make,
) -> None:
    gh = github(GATED)
    rid, ref = opened(gh)
    before, branch = gh.run_state(rid), gh.run_head(rid)
    cases = [
        ("reader", "COLLABORATOR", False, "has read access"),
        ("github-actions[bot]", "NONE", True, "is a bot account"),
        ("stranger", "NONE", False, "deciding needs write access"),
    ]
    for login, association, bot, why in cases:
        comment = gh.comment_event(2, f"/omg approve ok @{ref[:7]}", login, association, bot=bot)
        job = gh.run("issue_comment", comment, actor=login)
        assert job.rc == 0, job.stderr
        assert job.outputs["status"] == "paused", job.stderr
        assert any(f"@{login} omg refused" in r and why in r for r in replies(gh)), replies(gh)
    # each refusal is a note of its own; the run branch is not touched (no leg could lose a
    # race to it), and the run still waits at its gate
    assert gh.run_head(rid) == branch and gh.run_state(rid) == before
    noted = sorted(gh.notes(rid).values(), key=lambda n: str(n["ts"]))
    assert [(n["event"], n["by"], n["node_id"]) for n in noted] == [
        ("decision_refused", c[0], "ok") for c in cases
    ]
    # the stranger's association was enough to refuse: the permission API was not asked
    assert not gh.api.calls("GET", "collaborators/stranger/")
    assert gh.api.calls("GET", "collaborators/reader/permission")
    # the next leg folds them in, in the order they were made, and drops their refs
    approve = gh.comment_event(2, f"/omg approve ok @{ref[:7]}", "octocat", "MEMBER")
    job = gh.run("issue_comment", approve, actor="octocat")
    assert job.outputs["status"] == "passed", job.stderr
    refused = [e for e in gh.run_events(rid) if e["event"] == "decision_refused"]
    assert [e["by"] for e in refused] == [c[0] for c in cases]
    assert gh.notes(rid) == {}


def test_a_decision_about_a_state_that_moved_on_is_refused_as_stale(github: Make) -> None:
    gh = github(TWO_GATES)
    rid, first_ref = opened(gh, {"code.txt": "v1\n"})
    job = gh.run(
        "issue_comment",
        gh.comment_event(2, f"/omg approve first @{first_ref[:7]}", "octocat", "MEMBER"),
    )
    assert job.outputs["gate"] == "second", job.stderr
    stale = gh.comment_event(2, f"/omg approve second @{first_ref[:7]}", "octocat", "MEMBER")
    job = gh.run("issue_comment", stale)
    assert job.rc == 0 and job.outputs["status"] == "paused", job.stderr
    assert any("stale state" in r for r in replies(gh)), replies(gh)
    assert gh.run_state(rid)["paused_at"] == "second"
    unknown = gh.comment_event(2, "/omg approve second @abcdef1", "octocat", "MEMBER")
    gh.run("issue_comment", unknown)
    assert any("is not a state of run" in r for r in replies(gh))
    wrong_gate = gh.comment_event(2, "/omg reject first too late", "octocat", "MEMBER")
    gh.run("issue_comment", wrong_gate)
    assert len(replies(gh)) == 3 and "first" in replies(gh)[-1]
    ref = job.outputs["state-ref"][:7]
    fresh = gh.comment_event(2, f"/omg approve second @{ref}", "octocat", "MEMBER")
    done = gh.run("issue_comment", fresh)
    assert done.outputs["status"] == "passed", done.stderr


def test_a_new_push_while_paused_supersedes_the_old_heads_run(github: Make) -> None:
    gh = github(GATED)
    old_rid, old_ref = opened(gh)
    old_head = gh.heads[2]
    new_head = gh.push_pr(2, {"code.txt": "v2\n"})
    job = gh.run("pull_request", gh.pr_event("synchronize", 2, before=old_head))
    assert job.rc == 0, job.stderr
    new_rid = job.outputs["run-id"]
    assert new_rid == f"pr-2-pr-{new_head[:7]}" != old_rid
    old = gh.run_state(old_rid)
    assert old["status"] == "superseded"  # kept, with its record, but no longer decidable
    assert old["nodes"]["build"]["verdict"] == "PASS"
    assert gh.run_state(new_rid)["pull_request"]["head_sha"] == new_head
    body = sticky(gh)
    assert f"judging head `{new_head[:7]}`" in body and old_ref[:7] not in body
    # a decision copied from the old comment does not land on the new head's run
    late = gh.comment_event(2, f"/omg approve ok @{old_ref[:7]}", "octocat", "MEMBER")
    job = gh.run("issue_comment", late)
    assert job.outputs["status"] == "paused", job.stderr
    assert gh.run_state(new_rid)["gates"] == {}
    assert any("is not a state of run" in r for r in replies(gh))


def test_comments_that_are_not_commands_are_ignored_quietly(github: Make) -> None:
    gh = github(GATED)
    opened(gh)
    branches, calls = gh.run_branches(), len(gh.api.requests)
    job = gh.run("issue_comment", gh.comment_event(2, "LGTM, nice work", "octocat", "MEMBER"))
    assert job.rc == 0 and job.stderr == "" and job.summary == ""
    assert job.outputs["status"] == "skipped"
    assert gh.run_branches() == branches and len(gh.api.requests) == calls
    assert len(gh.api.comments_on(2)) == 2  # the sticky one and the LGTM


def test_status_answers_in_a_reply_and_changes_nothing(github: Make) -> None:
    gh = github(GATED)
    rid, _ = opened(gh)
    seq = gh.run_state(rid)["seq"]
    job = gh.run("issue_comment", gh.comment_event(2, "/omg status", "stranger", "NONE"))
    assert job.rc == 0, job.stderr
    assert any("paused" in r for r in replies(gh))
    assert gh.run_state(rid)["seq"] == seq


def test_a_fork_pr_gets_an_explanation_and_nothing_is_pushed(github: Make) -> None:
    gh = github(GATED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    event = gh.pr_event("opened", 2)
    event["pull_request"]["head"]["repo"]["full_name"] = "someone/Hello-World"
    job = gh.run("pull_request", event, extra={"GITHUB_TOKEN": ""})
    assert job.rc == 0, job.stderr
    assert "comes from a fork" in job.stderr and "comes from a fork" in job.summary
    assert "Traceback" not in job.stderr
    assert gh.run_branches() == [] and gh.api.comments == []


def test_a_dispatch_decides_a_gate_with_its_inputs(github: Make) -> None:
    gh = github(GATED)
    rid, _ = opened(gh)
    for said in ("", "\u200b\u2060\u3164 \u202e"):  # nothing, or nothing that shows
        no_reason = gh.dispatch_event(
            {"run-id": rid, "gate": "ok", "decision": "reject", "reason": said}
        )
        job = gh.run("workflow_dispatch", no_reason, actor="octocat")
        assert job.rc == 2 and "a reject needs the reason input" in job.stderr
        assert "Traceback" not in job.stderr and gh.run_state(rid)["paused_at"] == "ok"
    inputs = {"run-id": rid, "gate": "ok", "decision": "approve", "reason": "from the form"}
    job = gh.run("workflow_dispatch", gh.dispatch_event(inputs), actor="octocat")
    assert job.rc == 0 and job.outputs["status"] == "passed", job.stderr
    assert gh.run_state(rid)["gates"]["ok"]["by"] == "octocat"
    assert "✅" in sticky(gh)  # the PR's comment follows a run decided from the Actions tab


def test_a_dispatch_without_a_run_is_refused_with_what_to_do(github: Make) -> None:
    gh = github(GATED)
    job = gh.run("workflow_dispatch", gh.dispatch_event({}))
    assert job.rc == 2 and "needs the run-id input" in job.stderr
    job = gh.run("workflow_dispatch", gh.dispatch_event({"run-id": "pr-9-pr-0000000"}))
    assert (
        job.rc == 3 and "has no run 'pr-9-pr-0000000'" in job.stderr and "ls-remote" in job.stderr
    )
    assert gh.run_branches() == []


def test_dispatched_words_that_are_not_utf8_are_refused_by_name(github: Make) -> None:
    """A ``\\udXXX`` escape in the payload's inputs, or a stray byte in a variable the action
    passes, is no text any record holds: exit 2 naming the input, and the run is untouched."""
    gh = github(GATED)
    rid, _ = opened(gh)
    seq = gh.run_state(rid)["seq"]
    inputs = {"run-id": rid, "guidance": "use the v2 API\udcff"}
    job = gh.run("workflow_dispatch", gh.dispatch_event(inputs), actor="octocat")
    assert job.rc == 2, job.stderr
    assert "the workflow_dispatch input 'guidance' is not valid UTF-8" in job.stderr
    assert "(byte 0xFF at character 15)" in job.stderr and "Traceback" not in job.stderr
    reason = {"run-id": rid, "gate": "ok", "decision": "reject", "reason": "no\ud800"}
    job = gh.run("workflow_dispatch", gh.dispatch_event(reason), actor="octocat")
    assert job.rc == 2 and "input 'reason' is not valid UTF-8" in job.stderr, job.stderr
    # what the action passes through the environment (an input given as `run-id: ${{ … }}`)
    plain = gh.dispatch_event({"run-id": rid})
    job = gh.run("workflow_dispatch", plain, actor="octocat", extra={"OMG_RUN_ID": "r\udcfe"})
    assert job.rc == 2, job.stderr
    assert "OMG_RUN_ID is not valid UTF-8 (byte 0xFE at character 2)" in job.stderr
    assert gh.run_state(rid)["seq"] == seq and gh.run_state(rid)["paused_at"] == "ok"
