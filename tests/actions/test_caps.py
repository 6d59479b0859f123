"""Spend caps beyond one run and provider limits, as GitHub runs them: a per-PR cap across a
superseded and a new run, `/omg approve-spend`, and a run paused for a session limit that the
resume workflow's schedule continues once its wait is over — a damaged wait named and skipped."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2
from kit import ScriptedClaude

from .kit import Repo

Make = Callable[[str], Repo]

CAPPED = """\
name: pr
pr_budget_usd: 0.05
nodes:
  - id: impl
    prompt: Implement it.
  - id: review
    depends_on: [impl]
    prompt: Review it.
"""

LIMITED = """\
name: pr
nodes:
  - id: impl
    prompt: Implement it.
"""
SESSION_LIMIT = {
    "result": "You've hit your session limit · resets 3pm",
    "is_error": True,
    "api_error_status": 429,
    "cost": 0,
}


def sticky(gh: Repo, number: int) -> str:
    found = [c["body"] for c in gh.api.comments_on(number) if "omg:sticky" in c["body"]]
    assert len(found) == 1, found
    return str(found[0])


def book(gh: Repo, scope: str) -> str:
    repo = pygit2.Repository(str(gh.origin))
    blob = repo.revparse_single(f"refs/omg/spend/{scope}").peel(pygit2.Commit).tree["spend.json"]
    return bytes(blob.data).decode()


def waits(gh: Repo) -> list[str]:
    repo = pygit2.Repository(str(gh.origin))
    return [r.removeprefix("refs/omg/waits/") for r in repo.references if "refs/omg/waits/" in r]


def test_a_pull_request_cap_counts_a_superseded_run_and_approve_spend_continues(
    github: Make, tmp_path: Path
) -> None:
    claude = ScriptedClaude(tmp_path / "claude")
    claude.replies([{"result": "DONE", "cost": 0.03}])
    extra = {"OMG_CLAUDE_BIN": str(claude.bin)}
    gh = github(CAPPED)
    old = gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2), extra=extra)
    assert first.rc == 0 and first.outputs["status"] == "passed", first.stderr
    assert "$0.06 of $0.05 on this pull request" in sticky(gh, 2)  # impl, then review (0.03 < 0.05)

    gh.push_pr(2, {"code.txt": "v2\n"})
    second = gh.run("pull_request", gh.pr_event("synchronize", 2, before=old), extra=extra)
    assert second.rc == 0, second.stderr
    assert (second.outputs["status"], second.outputs["next"]) == ("paused", "none")
    rid = second.outputs["run-id"]
    state = gh.run_state(rid)
    leg = state["legs"][-1]
    assert leg["reason"] == "spend_cap" and state["nodes"] == {}  # nothing started
    assert leg["capped"] == {
        "node_id": "impl",
        "scope": "pull_request",
        "key": "2",
        "cap_usd": 0.05,
        "spent_usd": 0.06,
    }
    body = sticky(gh, 2)
    assert "the pull request spend cap (PR #2, all its runs): $0.06 of $0.05 on this" in body
    assert "`impl` was not started" in body and "`/omg approve-spend <amount>`" in body
    assert len(claude.calls()) == 2  # the superseded run's two executions, none of the new one

    refused = gh.comment_event(2, "/omg approve-spend 1", "reader", "NONE")
    job = gh.run("issue_comment", refused, extra=extra)
    assert job.rc == 0 and len(claude.calls()) == 2, job.stderr

    approve = gh.comment_event(2, "/omg approve-spend 1", "octocat", "MEMBER")
    job = gh.run("issue_comment", approve, extra=extra)
    assert job.rc == 0 and job.outputs["status"] == "passed", job.stderr
    state = gh.run_state(rid)
    assert state["approved_usd"] == 1.0 and len(claude.calls()) == 4
    started = [e for e in gh.run_events(rid) if e["event"] == "run_started" and "approved_usd" in e]
    assert [(e["by"], e["approved_usd"]) for e in started] == [("octocat", 1.0)]
    body = sticky(gh, 2)
    assert "$0.12 of $0.05 on this pull request" in body and "$1.00 approved" in body
    assert '"run": "' + rid in book(gh, "pr/2")

    again = gh.run("issue_comment", approve, extra=extra)  # a re-run of that job
    assert again.rc == 0, again.stderr
    assert gh.run_state(rid)["approved_usd"] == 1.0 and len(claude.calls()) == 4


def test_a_session_limit_pauses_with_next_wait_and_the_schedule_continues_it(
    github: Make, tmp_path: Path
) -> None:
    claude = ScriptedClaude(tmp_path / "claude")
    claude.replies([SESSION_LIMIT, SESSION_LIMIT, {"result": "DONE", "cost": 0.02}])
    extra = {"OMG_CLAUDE_BIN": str(claude.bin), "OMG_LIMIT_WAIT": "3600"}
    gh = github(LIMITED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    job = gh.run("pull_request", gh.pr_event("opened", 2), extra=extra)
    assert job.rc == 0, job.stderr
    assert (job.outputs["status"], job.outputs["next"]) == ("paused", "wait")
    rid = job.outputs["run-id"]
    wait = gh.run_state(rid)["legs"][-1]["wait"]
    assert (wait["kind"], wait["resets"], wait["node_id"]) == ("session", "3pm", "impl")
    assert waits(gh) == [rid]
    body = sticky(gh, 2)
    assert "nothing failed — `impl` stopped at a usage limit (resets `3pm`" in body
    assert "The resume workflow's schedule continues the run from " + wait["not_before"] in body

    early = gh.run("schedule", {"schedule": "*/15 * * * *"}, extra=extra)
    assert early.rc == 0 and "no run waits to be continued now (1 waiting)" in early.stderr
    assert len(claude.calls()) == 1

    now = {**extra, "OMG_LIMIT_WAIT": "0"}  # the limit is still in force: paused again
    retry = gh.comment_event(2, "/omg retry", "octocat", "MEMBER")
    job = gh.run("issue_comment", retry, extra=now)
    assert job.rc == 0 and job.outputs["next"] == "wait", job.stderr
    assert len(claude.calls()) == 2 and waits(gh) == [rid]

    later = gh.run("schedule", {"schedule": "*/15 * * * *"}, extra=now)
    assert later.rc == 0, later.stderr
    assert later.outputs["status"] == "passed" and later.outputs["run-id"] == rid
    assert len(claude.calls()) == 3 and waits(gh) == []
    state = gh.run_state(rid)
    assert [leg["reason"] for leg in state["legs"]] == ["limit", "limit", None]
    assert "passed" in sticky(gh, 2)


@dataclass(frozen=True)
class Paused:
    """A pull request's run paused at a session limit, its wait on origin over at once."""

    gh: Repo
    claude: ScriptedClaude
    extra: dict[str, str]
    rid: str
    head: str  # the pull request's head it judges


def _paused_for_a_limit(github: Make, tmp_path: Path) -> Paused:
    claude = ScriptedClaude(tmp_path / "claude")
    claude.replies([SESSION_LIMIT, {"result": "DONE", "cost": 0.02}])
    extra = {"OMG_CLAUDE_BIN": str(claude.bin), "OMG_LIMIT_WAIT": "0"}
    gh = github(LIMITED)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2), extra=extra)
    assert first.outputs["next"] == "wait", first.stderr
    return Paused(gh, claude, extra, first.outputs["run-id"], head)


def test_the_schedule_clears_the_wait_of_a_superseded_run_and_names_a_foreign_one(
    github: Make, tmp_path: Path
) -> None:
    paused = _paused_for_a_limit(github, tmp_path)
    gh, claude, extra, old = paused.gh, paused.claude, paused.extra, paused.head
    gh.push_pr(2, {"code.txt": "v2\n"})
    second = gh.run("pull_request", gh.pr_event("synchronize", 2, before=old), extra=extra)
    assert second.outputs["status"] == "passed", second.stderr
    assert waits(gh) == [paused.rid]  # superseded while it waited
    _forge_wait(gh, "Not!A-run", b'{"not_before": "2000-01-01T00:00:00Z"}')

    job = gh.run("schedule", {"schedule": "*/15 * * * *"}, extra=extra)
    assert "Traceback" not in job.stderr
    assert f"run {paused.rid} is superseded: it waits for nothing" in job.stderr
    assert "the wait of run 'Not!A-run' was not continued" in job.stderr
    assert ":refs/omg/waits/Not!A-run" in job.stderr
    assert waits(gh) == ["Not!A-run"] and len(claude.calls()) == 2


def _forge_wait(gh: Repo, rid: str, data: bytes | None) -> None:
    """A wait on origin as a hand with push access might leave it (None: a directory)."""
    origin = pygit2.Repository(str(gh.origin))
    builder = origin.TreeBuilder()
    if data is None:
        inner = origin.TreeBuilder()
        inner.insert("x", origin.create_blob(b"{}"), pygit2.enums.FileMode.BLOB)
        builder.insert("wait.json", inner.write(), pygit2.enums.FileMode.TREE)
    else:
        builder.insert("wait.json", origin.create_blob(data), pygit2.enums.FileMode.BLOB)
    sig = pygit2.Signature("x", "x@example.com")
    sha = origin.create_commit(None, sig, sig, "forged", builder.write(), [])
    origin.references.create(f"refs/omg/waits/{rid}", sha)


def test_a_damaged_wait_is_named_and_skipped_and_the_schedule_continues_the_others(
    github: Make, tmp_path: Path
) -> None:
    paused = _paused_for_a_limit(github, tmp_path)
    gh, claude, extra, rid = paused.gh, paused.claude, paused.extra, paused.rid
    # waits that sort before the real one: nested past what Python recurses into, a number
    # past any bound, and a directory where wait.json belongs
    _forge_wait(gh, "a-nested", b"[" * 100_000 + b"]" * 100_000)
    _forge_wait(gh, "b-infinite", b'{"not_before": 1e999}')
    _forge_wait(gh, "c-directory", None)

    job = gh.run("schedule", {"schedule": "*/15 * * * *"}, extra=extra)
    assert job.rc == 1 and "Traceback" not in job.stderr, job.stderr
    said = " ".join(job.stderr.split())
    for name, why in [
        ("a-nested", "its wait.json is not JSON omg wrote (it is nested too deeply for any"),
        ("b-infinite", "its wait.json is not JSON omg wrote (the number 1e999 is past a float"),
        ("c-directory", "it holds wait.json as a directory, not a file"),
    ]:
        assert f"the wait of run '{name}' was skipped: refs/omg/waits/{name} on" in said, said
        assert f"is damaged ({why}" in said and f":refs/omg/waits/{name}`" in said
    assert job.outputs["status"] == "passed" and job.outputs["run-id"] == rid
    assert gh.run_state(rid)["status"] == "passed" and len(claude.calls()) == 2
    assert waits(gh) == ["a-nested", "b-infinite", "c-directory"]  # named, never removed


def test_approve_spend_on_a_run_at_a_gate_is_answered_with_the_command_it_needs(
    github: Make,
) -> None:
    from .test_pr_loop import GATED

    gh = github(GATED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    assert first.outputs["status"] == "paused" and first.outputs["gate"] == "ok", first.stderr
    rid, seq = first.outputs["run-id"], gh.run_state(first.outputs["run-id"])["seq"]
    event = gh.comment_event(2, "/omg approve-spend 5", "octocat", "MEMBER")
    cid = event["comment"]["id"]
    job = gh.run("issue_comment", event, actor="octocat")
    assert job.rc == 0, job.stderr
    [reply] = [c["body"] for c in gh.api.comments if f"<!-- omg:reply={cid} -->" in c["body"]]
    assert "paused at gate ok, not at a spend cap, so more spend changes nothing" in reply
    assert "/omg approve ok" in reply
    state = gh.run_state(rid)
    assert state["seq"] == seq and state["paused_at"] == "ok" and not state.get("approved_usd")
    [note] = gh.notes(rid).values()  # the refusal is on record, the run untouched
    assert note["event"] == "decision_refused" and note["by"] == "octocat"
    assert note["command"] == f"/omg approve-spend 5 (comment {cid})"
