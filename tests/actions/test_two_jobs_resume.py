"""Comment, dispatch and push legs that move an existing run, split in two jobs as the shipped
resume workflow runs them: the run job (a read-only token) runs the leg and hands it off; the
publish job (the write token, no node) plans the trigger itself — the commenter's permission
asked anew — does what runs no node on its own, and takes a leg only once verified."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from kit import ScriptedClaude

from .kit import READ_TOKEN, Job, Repo
from .test_caps import LIMITED, SESSION_LIMIT, waits
from .test_pr_loop import GATED, opened, replies, sticky

Make = Callable[[str], Repo]
RUN = 8200  # the workflow run both jobs of a leg belong to


def two_jobs(
    gh: Repo,
    name: str,
    event: dict[str, Any],
    tmp: Path,
    *,
    actor: str = "Codertocat",
    publish_event: dict[str, Any] | None = None,
    run: int = RUN,
    extra: dict[str, str] | None = None,
) -> tuple[Job, Job]:
    """The run job, its hand-off uploaded and downloaded by name in workflow run ``run``, then
    the publish job (on ``publish_event``, when given: what GitHub handed that job)."""
    out, into = tmp / f"up-{run}", tmp / f"down-{run}"
    ran = gh.run(name, event, token=READ_TOKEN, run_id=run, actor=actor, extra=extra,
                 command=("leg", "--hand-off", str(out)))  # fmt: skip
    if out.exists():
        gh.api.upload(run, f"omg-handoff-a{run}", out)
        gh.api.download(run, f"omg-handoff-a{run}", into)
    done = gh.run(name, publish_event or event, run_id=run, actor=actor, extra=extra,
                  command=("publish", str(into)))  # fmt: skip
    return ran, done


def _record(gh: Repo, rid: str) -> tuple[Any, ...]:
    """What a leg leaves of a run, whichever machine ran it: its status, verdicts, gates and
    events (kinds and nodes, in order)."""
    state = gh.run_state(rid)
    verdicts = {n: r["verdict"] for n, r in state["nodes"].items()}
    gates = {g: (d["decision"], d["by"], d["reason"]) for g, d in state["gates"].items()}
    events = [(e["event"], e.get("node_id")) for e in gh.run_events(rid)]
    return state["status"], state["paused_at"], verdicts, gates, events


def test_an_approve_comment_in_two_jobs_lands_the_record_one_job_lands(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    records = []
    for number, split in ((2, False), (3, True)):  # PR #2 in one job, PR #3 in two
        gh.push_pr(number, {"code.txt": "v1\n"})
        first = gh.run("pull_request", gh.pr_event("opened", number))
        rid, ref = first.outputs["run-id"], first.outputs["state-ref"]
        approve = gh.comment_event(number, f"/omg approve ok @{ref[:7]} fine", "octocat", "MEMBER")
        if split:
            ran, done = two_jobs(gh, "issue_comment", approve, tmp_path, actor="octocat")
            assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
            assert "pushed 2 refs" in done.stderr  # the run job wrote nothing: publish did
            size = sum(f.stat().st_size for f in (tmp_path / f"up-{RUN}").iterdir())
            print(f"\ncomment leg: publish job {done.seconds:.2f}s, artifact {size:,} bytes")
        else:
            done = gh.run("issue_comment", approve, actor="octocat")
            assert done.rc == 0, done.stderr
        assert done.outputs["status"] == "passed", done.stderr
        assert "passed" in sticky(gh, number) and not replies(gh, number)
        assert gh.api.statuses[gh.heads[number]][-1]["state"] == "success"
        records.append(_record(gh, rid))
    assert records[0] == records[1]


def test_the_publish_job_asks_the_commenters_permission_itself(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    rid, ref = opened(gh)
    before = gh.run_head(rid)
    # a run job that ran the leg a member's approval asks for, handed to a publish job whose
    # trigger is a reader's approval: the publish job plans its own trigger and refuses it
    member = gh.comment_event(2, f"/omg approve ok @{ref[:7]}", "octocat", "MEMBER")
    reader = gh.comment_event(2, f"/omg approve ok @{ref[:7]}", "reader", "COLLABORATOR")
    ran, done = two_jobs(gh, "issue_comment", member, tmp_path, publish_event=reader)
    assert ran.rc == 0 and ran.outputs["status"] == "passed", ran.stderr
    assert done.rc == 0, done.stderr
    assert gh.run_head(rid) == before and gh.run_state(rid)["paused_at"] == "ok"
    assert [n["by"] for n in gh.notes(rid).values()] == ["reader"]
    [answer] = replies(gh)
    assert "@reader omg refused" in answer and "has read access" in answer
    assert gh.api.calls("GET", "collaborators/reader/permission")


def test_a_refused_comment_in_two_jobs_is_recorded_and_answered_once(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    rid, ref = opened(gh)
    before = gh.run_head(rid)
    stranger = gh.comment_event(2, f"/omg approve ok @{ref[:7]}", "stranger", "NONE")
    ran, done = two_jobs(gh, "issue_comment", stranger, tmp_path)
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    # a re-run of the publish job (GitHub's "Re-run job") answers nothing twice
    again = gh.run("issue_comment", stranger, run_id=RUN, attempt=2,
                   command=("publish", str(tmp_path / "absent")))  # fmt: skip
    assert again.rc == 0, again.stderr
    assert gh.run_head(rid) == before
    [answer] = replies(gh)
    assert "@stranger omg refused" in answer
    assert [(n["event"], n["by"]) for n in gh.notes(rid).values()] == [
        ("decision_refused", "stranger")
    ]


def test_status_and_a_malformed_command_are_answered_by_the_publish_job(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    rid, _ = opened(gh)
    seq = gh.run_state(rid)["seq"]
    status = gh.comment_event(2, "/omg status", "octocat", "MEMBER")
    ran, done = two_jobs(gh, "issue_comment", status, tmp_path)
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    bad = gh.comment_event(2, "/omg frobnicate", "octocat", "MEMBER")
    ran, done = two_jobs(gh, "issue_comment", bad, tmp_path, run=RUN + 1)
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    said = replies(gh)
    assert len(said) == 2 and "paused" in said[0] and "frobnicate" in said[1]
    assert gh.run_state(rid)["seq"] == seq


def test_a_push_in_two_jobs_supersedes_the_earlier_heads_run_at_rest(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    old_rid, old_ref = opened(gh)
    old_head = gh.heads[2]
    new_head = gh.push_pr(2, {"code.txt": "v2\n"})
    push = gh.pr_event("synchronize", 2, before=old_head)
    ran, done = two_jobs(gh, "pull_request", push, tmp_path)
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    old = gh.run_state(old_rid)
    assert old["status"] == "superseded"
    assert [e["event"] for e in gh.run_events(old_rid)][-1] == "run_superseded"
    assert gh.api.statuses[old_head][-1]["description"].startswith("superseded")
    new_rid = ran.outputs["run-id"]
    assert gh.run_state(new_rid)["pull_request"]["head_sha"] == new_head
    assert gh.run_state(new_rid)["paused_at"] == "ok"
    body = sticky(gh)
    assert f"judging head `{new_head[:7]}`" in body and old_ref[:7] not in body


def test_a_dispatched_decision_in_two_jobs_resumes_the_run(github: Make, tmp_path: Path) -> None:
    gh = github(GATED)
    rid, _ = opened(gh)
    gh.api.permissions["octocat"] = "write"
    event = gh.dispatch_event({"run-id": rid, "gate": "ok", "decision": "approve"})
    ran, done = two_jobs(gh, "workflow_dispatch", event, tmp_path, actor="octocat")
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    state = gh.run_state(rid)
    assert state["status"] == "passed" and state["gates"]["ok"]["by"] == "octocat"
    assert "passed" in sticky(gh)


def test_a_schedule_in_two_jobs_continues_every_waiting_run_and_clears_its_wait(
    github: Make, tmp_path: Path
) -> None:
    claude = ScriptedClaude(tmp_path / "claude")
    claude.replies([SESSION_LIMIT, SESSION_LIMIT, {"result": "DONE", "cost": 0.02},
                    {"result": "DONE", "cost": 0.02}])  # fmt: skip
    extra = {"OMG_CLAUDE_BIN": str(claude.bin), "OMG_LIMIT_WAIT": "0"}
    gh = github(LIMITED)
    rids = []
    for number in (2, 3):  # each leg in two jobs: the publish job records the wait
        gh.push_pr(number, {"code.txt": "v1\n"})
        ran, done = two_jobs(gh, "pull_request", gh.pr_event("opened", number), tmp_path,
                             run=RUN + number, extra=extra)  # fmt: skip
        assert done.outputs["next"] == "wait", ran.stderr + done.stderr
        rids.append(done.outputs["run-id"])
    assert sorted(waits(gh)) == sorted(rids)
    ran, done = two_jobs(gh, "schedule", {"schedule": "*/15 * * * *"}, tmp_path, extra=extra)
    assert ran.rc == 0 and done.rc == 0, ran.stderr + done.stderr
    # one hand-off per run, in a folder of the artifact each
    assert sorted(p.name for p in (tmp_path / f"up-{RUN}").iterdir()) == sorted(rids)
    for rid in rids:
        assert gh.run_state(rid)["status"] == "passed"
        assert [leg["reason"] for leg in gh.run_state(rid)["legs"]] == ["limit", None]
    assert waits(gh) == [] and len(claude.calls()) == 4


def test_a_gate_decision_the_publish_job_did_not_judge_is_refused_and_nothing_lands(
    github: Make, tmp_path: Path
) -> None:
    gh = github(GATED)
    rid, ref = opened(gh)
    before = gh.run_head(rid)
    # the run job's leg approves the gate; the publish job's trigger asks a retry, which
    # decides no gate: an approval in the record is one no person's command made
    approve = gh.comment_event(2, f"/omg approve ok @{ref[:7]}", "octocat", "MEMBER")
    retry = gh.comment_event(2, "/omg retry", "octocat", "MEMBER")
    ran, done = two_jobs(gh, "issue_comment", approve, tmp_path, publish_event=retry)
    assert ran.rc == 0 and ran.outputs["status"] == "passed", ran.stderr
    assert done.rc == 3 and "was refused (record)" in done.stderr, done.stderr
    assert "approval of gate 'ok' by 'octocat'" in done.stderr
    assert gh.run_head(rid) == before and gh.run_state(rid)["paused_at"] == "ok"
    assert gh.api.statuses[gh.heads[2]][-1]["state"] == "failure"
