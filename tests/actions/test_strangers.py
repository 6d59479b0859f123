"""Comments that arrive while a leg runs: a stranger's `/omg approve`, a `/omg status`, a
writer's early decision. None may knock the running leg out; each is answered once, however
often GitHub re-runs its job, and the refusals are on record once the next leg folds them in."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .kit import Job, Repo, Running
from .test_pr_loop import GATED

Make = Callable[[str], Repo]

#: How long a test waits for a leg to reach its slow node (a bound, never a pace).
REACH_S = 60.0
#: Comments in a burst: each one a workflow job of its own.
BURST = 10


def door(tmp_path: Path) -> tuple[Path, str]:
    """A directory the test controls, and a shell command that says it started, then waits
    until the test opens the door (a file appears there): a node as slow as the test wants."""
    path = tmp_path / "door"
    path.mkdir()
    wait = (
        f"touch {path}/started; i=0; while [ ! -e {path}/go ] && [ $i -lt 1200 ]; "
        f"do sleep 0.05; i=$((i+1)); done; test -e {path}/go && echo released"
    )
    return path, wait


def held(tmp_path: Path) -> tuple[str, Path]:
    """``slow`` (held at the door) → ``next`` → gate ``ok`` → ``ship``."""
    path, wait = door(tmp_path)
    graph = f"""\
name: pr
nodes:
  - id: slow
    run: "{wait}"
  - id: next
    depends_on: [slow]
    run: echo next
  - id: ok
    type: gate
    depends_on: [next]
  - id: ship
    depends_on: [ok]
    run: echo shipped
"""
    return graph, path


def held_after_the_gate(tmp_path: Path) -> tuple[str, Path]:
    """``build`` → gate ``ok`` → ``ship`` (held at the door)."""
    path, wait = door(tmp_path)
    graph = f"""\
name: pr
nodes:
  - id: build
    run: echo built
  - id: ok
    type: gate
    depends_on: [build]
  - id: ship
    depends_on: [ok]
    run: "{wait}"
"""
    return graph, path


def reached(door: Path, leg: Running) -> None:
    """Wait (bounded) until the held node runs; fail with the leg's output if it ended first."""
    deadline = time.monotonic() + REACH_S
    while not (door / "started").exists():
        if leg.proc.poll() is not None:
            job = leg.wait()
            raise AssertionError(f"the leg ended before its slow node ran:\n{job.stderr}")
        assert time.monotonic() < deadline, "the leg never reached its slow node"
        time.sleep(0.02)


def events(gh: Repo, rid: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in gh.run_events(rid) if e["event"] == kind]


def replies_to(gh: Repo, comment_id: int) -> list[str]:
    return [c["body"] for c in gh.api.comments if f"<!-- omg:reply={comment_id} -->" in c["body"]]


def comment(gh: Repo, body: str, login: str, association: str) -> tuple[dict[str, Any], int]:
    event = gh.comment_event(2, body, login, association)
    return event, int(event["comment"]["id"])


def test_comments_mid_node_leave_the_running_leg_its_work(github: Make, tmp_path: Path) -> None:
    graph, door = held(tmp_path)
    gh = github(graph)
    gh.push_pr(2, {"code.txt": "v1\n"})
    # the PR's leg runs one node this leg (a budget), so it must also dispatch its next leg
    leg = gh.job("pull_request", gh.pr_event("opened", 2), extra={"OMG_MAX_NODES": "1"}, start=True)
    assert isinstance(leg, Running)
    reached(door, leg)
    rid = f"pr-2-pr-{gh.heads[2][:7]}"

    stranger, stranger_id = comment(gh, "/omg approve ok", "stranger", "NONE")
    status, status_id = comment(gh, "/omg status", "passer-by", "NONE")
    early, early_id = comment(gh, "/omg approve ok ship it", "octocat", "MEMBER")
    answers: dict[int, Job] = {}
    for event, cid, actor in (
        (stranger, stranger_id, "stranger"),
        (status, status_id, "passer-by"),
        (early, early_id, "octocat"),
    ):
        answers[cid] = gh.run("issue_comment", event, actor=actor, run_id=6000 + cid % 1000)
        assert answers[cid].rc == 0, answers[cid].stderr
        assert len(replies_to(gh, cid)) == 1, gh.api.comments
    assert "deciding needs write access" in replies_to(gh, stranger_id)[0]
    assert "is running leg 1" in replies_to(gh, early_id)[0]
    assert "run `" + rid + "`" in replies_to(gh, status_id)[0]
    assert gh.run_state(rid)["status"] == "running"  # the leg is mid-node
    assert "a leg is running (workflow run" in replies_to(gh, status_id)[0]
    # the PR's comment is the running leg's to write: no report made meanwhile can land
    # after the leg's own and show a stale state
    assert not [c for c in gh.api.comments if "omg:sticky" in c["body"]]
    assert sorted(gh.notes(rid)) == [f"refused-c{stranger_id}", f"refused-c{early_id}"]

    (door / "go").touch()
    first = leg.wait()
    assert first.rc == 0, first.stderr
    assert first.outputs["run-id"] == rid, first.stderr  # not "skipped" with no run
    assert first.outputs["status"] == "continuing" and first.outputs["next"] == "dispatch"
    assert "another leg advanced" not in first.stderr
    state = gh.run_state(rid)
    assert state["nodes"]["slow"]["verdict"] == "PASS"  # its work is on the run branch
    assert state["legs"][0]["outcome"] == "paused"
    [sticky] = [c["body"] for c in gh.api.comments if "omg:sticky" in c["body"]]
    assert "continuing in the next leg" in sticky
    # the leg folded in what was noted while it ran, and dropped those notes' refs
    refused = events(gh, rid, "decision_refused")
    assert [(e["command"], e["by"], e["leg"]) for e in refused] == [
        (f"/omg approve ok (comment {stranger_id})", "stranger", 1),
        (f"/omg approve ok ship it (comment {early_id})", "octocat", 1),
    ]
    [sent] = gh.api.runs  # one next leg, from the leg that paused, none from the comments
    assert list(gh.notes(rid)) == ["dispatched-leg1"]  # noted after the leg's last push

    # GitHub's "Re-run job" on each comment: no second reply, no second refusal
    posts = len(gh.api.calls("POST", r"/issues/2/comments$"))
    for event, cid, actor in (
        (stranger, stranger_id, "stranger"),
        (status, status_id, "passer-by"),
        (early, early_id, "octocat"),
    ):
        again = gh.run("issue_comment", event, actor=actor, run_id=6000 + cid % 1000, attempt=2)
        assert again.rc == 0, again.stderr
        assert len(replies_to(gh, cid)) == 1
    assert len(gh.api.calls("POST", r"/issues/2/comments$")) == posts
    assert len(gh.api.runs) == 1  # a /omg status dispatches nothing
    assert list(gh.notes(rid)) == ["dispatched-leg1"]

    # the dispatched leg runs on and folds the dispatch in, on the leg that sent it
    second = gh.run("workflow_dispatch", gh.dispatch_event(sent["inputs"]), run_id=sent["id"])
    assert second.rc == 0 and second.outputs["status"] == "paused", second.stderr
    [dispatched] = events(gh, rid, "leg_dispatched")
    assert dispatched["workflow_run_id"] == str(sent["id"]) and dispatched["leg"] == 1
    state = gh.run_state(rid)
    assert state["legs"][0]["dispatched"] == {
        "workflow_run_id": str(sent["id"]),
        "url": sent["html_url"],
    }
    assert "dispatched" not in state["legs"][1]
    assert gh.notes(rid) == {}
    ref = second.outputs["state-ref"][:7]
    approve, _ = comment(gh, f"/omg approve ok @{ref}", "octocat", "MEMBER")
    done = gh.run("issue_comment", approve, actor="octocat")
    assert done.rc == 0 and done.outputs["status"] == "passed", done.stderr
    assert gh.node_starts(rid) == ["slow", "next", "ship"]  # nothing ran twice
    assert len(events(gh, rid, "decision_refused")) == 2


def paused_then_approved(gh: Repo, door: Path) -> tuple[str, Running]:
    """A PR run paused at ``ok``; a member's approval, its leg now held inside ``ship``."""
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    assert first.outputs["status"] == "paused", first.stderr
    rid, ref = first.outputs["run-id"], first.outputs["state-ref"]
    event, _ = comment(gh, f"/omg approve ok @{ref[:7]} go", "octocat", "MEMBER")
    leg = gh.job("issue_comment", event, actor="octocat", start=True)
    assert isinstance(leg, Running)
    reached(door, leg)
    return rid, leg


def test_decisions_while_the_decided_leg_runs_leave_it_alone(github: Make, tmp_path: Path) -> None:
    graph, door = held_after_the_gate(tmp_path)
    gh = github(graph)
    gh.api.permissions["mona"] = "write"
    rid, leg = paused_then_approved(gh, door)
    again, again_id = comment(gh, "/omg approve ok go", "octocat", "MEMBER")  # posted twice
    other, other_id = comment(gh, "/omg approve ok", "mona", "MEMBER")
    retry, retry_id = comment(gh, "/omg retry", "mona", "MEMBER")
    for event, actor in ((again, "octocat"), (other, "mona"), (retry, "mona")):
        job = gh.run("issue_comment", event, actor=actor)
        assert job.rc == 0, job.stderr
        assert job.outputs["status"] == "continuing", job.stderr  # the run is mid-leg
    assert replies_to(gh, again_id) == []  # on record already: nothing to answer
    for cid in (other_id, retry_id):
        [reply] = replies_to(gh, cid)
        assert "is running leg 2 (workflow run" in reply, reply
    (door / "go").touch()
    done = leg.wait()
    assert done.rc == 0 and done.outputs["status"] == "passed", done.stderr
    assert gh.node_starts(rid) == ["build", "ship"]  # no second leg ran ship
    assert len(events(gh, rid, "gate_approved")) == 1
    refused = events(gh, rid, "decision_refused")
    assert [(e["by"], e["leg"]) for e in refused] == [("mona", 2), ("mona", 2)]
    assert [e["command"] for e in refused] == [
        f"/omg approve ok (comment {other_id})",
        f"/omg retry (comment {retry_id})",
    ]
    assert gh.notes(rid) == {}


def test_a_push_while_a_leg_runs_supersedes_the_run_after_its_work(
    github: Make, tmp_path: Path
) -> None:
    graph, door = held_after_the_gate(tmp_path)
    gh = github(graph)
    rid, leg = paused_then_approved(gh, door)
    old_head = gh.heads[2]
    gh.push_pr(2, {"code.txt": "v2\n"})
    newer = gh.run("pull_request", gh.pr_event("synchronize", 2, before=old_head))
    assert newer.rc == 0 and newer.outputs["status"] == "paused", newer.stderr
    assert gh.run_state(rid)["status"] == "running"  # noted; the leg is left to finish
    assert list(gh.notes(rid)) == [f"superseded-{gh.heads[2]}"]
    sticky_before = [c["body"] for c in gh.api.comments if "omg:sticky" in c["body"]]
    (door / "go").touch()
    done = leg.wait()
    assert done.rc == 0, done.stderr
    old = gh.run_state(rid)
    assert old["nodes"]["ship"]["verdict"] == "PASS"  # its work is on record, and then:
    assert old["status"] == "superseded" and old["superseded_by"] == gh.heads[2]
    assert gh.notes(rid) == {}
    # the PR's comment still shows the newer head's run, not the superseded one's last leg
    assert [c["body"] for c in gh.api.comments if "omg:sticky" in c["body"]] == sticky_before


def test_a_strangers_comments_during_a_fan_out_wave_disturb_none_of_its_jobs(
    github: Make, tmp_path: Path
) -> None:
    from .test_fanout import fold, node_job, plan

    path, wait = door(tmp_path)
    gh = github(f'name: pr\nconcurrency: 2\nnodes:\n  - id: t01\n    run: "{wait}"\n'
                "  - {id: t02, run: 'echo t02'}\n")  # fmt: skip
    gh.push_pr(2, {"code.txt": "v1\n"})
    rid = f"pr-2-pr-{gh.heads[2][:7]}"  # the run a comment on PR 2 is about
    planned = plan(gh, rid)
    assert planned.rc == 0, planned.stderr
    base = planned.outputs["base"]
    before, _ = comment(gh, "/omg approve t01", "stranger", "NONE")
    assert gh.run("issue_comment", before, actor="stranger").rc == 0
    jobs = {n: node_job(gh, rid, n, base, start=True) for n in ("t01", "t02")}
    held = jobs["t01"]
    assert isinstance(held, Running)
    reached(path, held)
    during, _ = comment(gh, "/omg approve t02", "stranger", "NONE")
    assert gh.run("issue_comment", during, actor="stranger").rc == 0
    (path / "go").touch()
    for job in jobs.values():
        assert isinstance(job, Running)
        done = job.wait()
        assert done.rc == 0 and done.outputs["status"] == "published", done.stderr
    folded = fold(gh, rid, base)
    assert folded.rc == 0 and folded.outputs["status"] == "passed", folded.stderr
    assert gh.run_state(rid)["legs"][-1]["fanout"] == {"folded": ["t01", "t02"]}
    evs = gh.run_events(rid)
    assert [e["seq"] for e in evs] == list(range(1, len(evs) + 1))
    assert [e["by"] for e in evs if e["event"] == "decision_refused"] == ["stranger"] * 2
    assert gh.node_starts(rid) == ["t01", "t02"] and gh.notes(rid) == {}


def answers_to(gh: Repo, login: str) -> list[dict[str, Any]]:
    """omg's replies that answer ``login`` (the hidden addressee line every reply carries)."""
    return [
        c
        for c in gh.api.comments
        if f"<!-- omg:to={login.lower()} -->" in c["body"] and c["user"]["type"] == "Bot"
    ]


def test_a_burst_of_a_strangers_long_comments_is_recorded_in_brief_and_answered_once(
    github: Make,
) -> None:
    gh = github(GATED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    opened = gh.run("pull_request", gh.pr_event("opened", 2))
    assert opened.outputs["status"] == "paused", opened.stderr
    rid = opened.outputs["run-id"]
    recorded = len(gh.run_file(rid, "events.jsonl"))
    huge = "/omg approve ok " + "x" * 65_000  # one line, as long as a comment may be
    ids = []
    for _ in range(BURST):
        event, cid = comment(gh, huge, "stranger", "NONE")
        sent = len(gh.api.requests)
        job = gh.run("issue_comment", event, actor="stranger")
        assert job.rc == 0, job.stderr
        ids.append(cid)
    # a quiet refusal costs the token two calls: the PR's head, and its comments (one page)
    assert [(r.method, r.path.split("?")[0]) for r in gh.api.requests[sent:]] == [
        ("GET", "/repos/Codertocat/Hello-World/pulls/2"),
        ("GET", "/repos/Codertocat/Hello-World/issues/2/comments"),
    ]
    # every refusal is on record — each in brief
    notes = gh.notes(rid)
    assert sorted(notes) == sorted(f"refused-c{cid}" for cid in ids)
    assert max(len(json.dumps(n)) for n in notes.values()) < 1_000
    # one answer for the burst, to its first comment, quoting it in brief
    assert [cid for cid in ids if replies_to(gh, cid)] == ids[:1]
    [reply] = answers_to(gh, "stranger")
    assert f"<!-- omg:reply={ids[0]} -->" in reply["body"]
    assert "deciding needs write access" in reply["body"]
    assert "more characters cut]" in reply["body"] and len(reply["body"]) < 1_000
    assert "was answered in the last 10 minutes; not again now" in job.stderr
    # another login is answered all the same
    event, other = comment(gh, "/omg approve ok", "passer-by", "CONTRIBUTOR")
    assert gh.run("issue_comment", event, actor="passer-by").rc == 0
    assert len(replies_to(gh, other)) == 1 and len(answers_to(gh, "passer-by")) == 1
    # ten quiet minutes later the stranger is answered again
    reply["created_at"] = "2001-01-01T00:00:00Z"
    event, later = comment(gh, "/omg approve ok", "Stranger", "NONE")  # logins ignore case
    assert gh.run("issue_comment", event, actor="Stranger").rc == 0
    assert len(replies_to(gh, later)) == 1 and len(answers_to(gh, "stranger")) == 2
    # the writer's decision folds the burst's refusals and the two later ones in: the record
    # grew by under a kilobyte a refusal
    event, _ = comment(gh, "/omg approve ok", "octocat", "MEMBER")
    done = gh.run("issue_comment", event, actor="octocat")
    assert done.outputs["status"] == "passed", done.stderr
    assert len(events(gh, rid, "decision_refused")) == BURST + 2 and gh.notes(rid) == {}
    grown = len(gh.run_file(rid, "events.jsonl")) - recorded
    assert grown < (BURST + 2) * 1_000 + 5_000, grown
