"""Legs across jobs: a budgeted leg dispatches the next, re-runs execute nothing settled,
two racing legs of one run end with exactly one advancing, `/omg retry` re-runs a failure."""

from __future__ import annotations

import json
from collections.abc import Callable

from .kit import RESUME, Repo, Running

CHAIN = """\
name: pr
nodes:
  - id: a
    run: echo a
  - id: b
    depends_on: [a]
    run: echo b
  - id: c
    depends_on: [b]
    run: echo c
"""

SLOW = """\
name: pr
nodes:
  - id: a
    run: echo a
  - id: b
    depends_on: [a]
    run: sleep 1 && echo b
"""

FLAKY = """\
name: pr
nodes:
  - id: check
    run: test -f fixed.txt || (echo "fixed.txt is missing" >&2; exit 3)
"""

Make = Callable[[str], Repo]


def test_a_budgeted_leg_dispatches_the_next_and_the_next_leg_continues(github: Make) -> None:
    gh = github(CHAIN)
    gh.push_pr(2, {"code.txt": "v1\n"})
    one = {"OMG_MAX_NODES": "1"}
    first = gh.run("pull_request", gh.pr_event("opened", 2), extra=one)
    assert first.rc == 0, first.stderr
    assert first.outputs["status"] == "continuing" and first.outputs["next"] == "dispatch"
    rid = first.outputs["run-id"]
    [sent] = gh.api.runs
    assert sent["workflow"] == RESUME and sent["ref"] == "main"
    assert sent["inputs"] == {"run-id": rid}
    # noted off the run branch (the next leg may be running already), folded in by a later leg
    assert gh.notes(rid)["dispatched-leg1"]["workflow_run_id"] == str(sent["id"])
    assert gh.api.calls("POST", "dispatches")[0].authorization.startswith("Bearer ghs_")
    legs = [first]
    while legs[-1].outputs["next"] == "dispatch":
        run = gh.api.runs[-1]
        legs.append(
            gh.run(
                "workflow_dispatch", gh.dispatch_event(run["inputs"]), extra=one, run_id=run["id"]
            )
        )
        assert legs[-1].rc == 0, legs[-1].stderr
    assert [j.outputs["status"] for j in legs] == ["continuing", "continuing", "passed"]
    assert gh.node_starts(rid) == ["a", "b", "c"]
    dispatched = [e for e in gh.run_events(rid) if e["event"] == "leg_dispatched"]
    assert [(e["leg"], e["workflow_run_id"]) for e in dispatched] == [
        (1, str(gh.api.runs[0]["id"])),
        (2, str(gh.api.runs[1]["id"])),
    ]
    assert [
        leg.get("dispatched", {}).get("workflow_run_id") for leg in gh.run_state(rid)["legs"]
    ] == [
        str(gh.api.runs[0]["id"]),
        str(gh.api.runs[1]["id"]),
        None,
    ]
    assert gh.notes(rid) == {}
    ci = [e["ci"]["workflow_run_id"] for e in gh.run_events(rid) if e["event"] == "run_started"]
    assert ci == [legs[0].env["GITHUB_RUN_ID"], *[str(r["id"]) for r in gh.api.runs[:2]]]


def test_a_dispatch_without_run_details_still_continues(github: Make) -> None:
    gh = github(CHAIN)
    gh.api.run_details = False
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2), extra={"OMG_MAX_NODES": "2"})
    assert first.outputs["next"] == "dispatch", first.stderr
    [dispatched] = gh.notes(first.outputs["run-id"]).values()
    assert dispatched["event"] == "leg_dispatched" and "workflow_run_id" not in dispatched


def test_a_rerun_job_executes_no_settled_node(github: Make) -> None:
    gh = github(CHAIN)
    gh.push_pr(2, {"code.txt": "v1\n"})
    event = gh.pr_event("opened", 2)
    first = gh.run("pull_request", event, run_id=4242)
    assert first.outputs["status"] == "passed", first.stderr
    rid = first.outputs["run-id"]
    again = gh.run("pull_request", event, run_id=4242, attempt=2)
    assert again.rc == 0, again.stderr
    assert again.outputs["status"] == "passed"
    assert gh.node_starts(rid) == ["a", "b", "c"]


def test_a_rerun_of_an_approval_job_decides_once(github: Make) -> None:
    gh = github(
        CHAIN.replace(
            "  - id: c\n    depends_on: [b]",
            "  - id: g\n    type: gate\n    depends_on: [b]\n  - id: c\n    depends_on: [g]",
        )
    )
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    rid = first.outputs["run-id"]
    approve = gh.comment_event(2, "/omg approve g", "octocat", "MEMBER")
    done = gh.run("issue_comment", approve, run_id=5151)
    assert done.outputs["status"] == "passed", done.stderr
    again = gh.run("issue_comment", approve, run_id=5151, attempt=2)
    assert again.rc == 0 and again.outputs["status"] == "passed", again.stderr
    decided = [e for e in gh.run_events(rid) if e["event"] == "gate_approved"]
    assert len(decided) == 1 and gh.node_starts(rid).count("c") == 1


def test_two_racing_legs_of_one_run_advance_it_once(github: Make) -> None:
    gh = github(SLOW)
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2), extra={"OMG_MAX_NODES": "1"})
    rid = first.outputs["run-id"]
    inputs = {"run-id": rid}
    procs = [gh.job("workflow_dispatch", gh.dispatch_event(inputs), start=True) for _ in range(2)]
    jobs = [p.wait() for p in procs if isinstance(p, Running)]
    assert [j.rc for j in jobs] == [0, 0], "\n----\n".join(j.stderr for j in jobs)
    assert gh.node_starts(rid).count("b") == 1
    loser = [j for j in jobs if "another leg advanced" in j.stderr]
    assert len(loser) == 1, [j.stderr for j in jobs]
    assert gh.run_state(rid)["status"] == "passed"


def test_retry_comment_reruns_a_failed_node_on_the_pr_head(github: Make) -> None:
    gh = github(FLAKY)
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    assert first.rc == 1 and first.outputs["status"] == "failed", first.stderr
    assert any(a.startswith("::error") and "check" in a for a in first.annotations)
    rid = first.outputs["run-id"]
    retry = gh.run("issue_comment", gh.comment_event(2, "/omg retry", "octocat", "MEMBER"))
    assert retry.rc == 1 and retry.outputs["status"] == "failed", retry.stderr
    assert gh.node_starts(rid) == ["check", "check"]


def test_two_approvals_racing_decide_once_and_the_other_is_answered(github: Make) -> None:
    gh = github(
        SLOW.replace(
            "  - id: b\n", "  - id: g\n    type: gate\n    depends_on: [a]\n  - id: b\n"
        ).replace("depends_on: [a]\n    run: sleep", "depends_on: [g]\n    run: sleep")
    )
    gh.push_pr(2, {"code.txt": "v1\n"})
    rid = gh.run("pull_request", gh.pr_event("opened", 2)).outputs["run-id"]
    gh.api.permissions["octocat"] = gh.api.permissions["mona"] = "write"
    racing = [
        gh.job(
            "issue_comment",
            gh.comment_event(2, f"/omg approve g by {who}", who, "MEMBER"),
            start=True,
        )
        for who in ("octocat", "mona")
    ]
    jobs = [r.wait() for r in racing if isinstance(r, Running)]
    assert [j.rc for j in jobs] == [0, 0], "\n----\n".join(j.stderr for j in jobs)
    approved = [e for e in gh.run_events(rid) if e["event"] == "gate_approved"]
    assert len(approved) == 1 and gh.node_starts(rid).count("b") == 1
    refused = [e for e in gh.run_events(rid) if e["event"] == "decision_refused"]
    others = [c["body"] for c in gh.api.comments_on(2) if "omg:reply" in c["body"]]
    assert len(refused) == len(others) <= 1  # the slower one, if it lost, is told why


GUIDED = """\
name: pr
nodes:
  - id: check
    run: |
      printf '%s' {{ guidance }} > said.txt
      test -s said.txt || { echo "said.txt is empty" >&2; exit 3; }
      cat said.txt
"""


def test_retry_comment_gives_its_words_to_the_rerun_node_as_guidance(github: Make) -> None:
    gh = github(GUIDED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    first = gh.run("pull_request", gh.pr_event("opened", 2))
    assert first.rc == 1 and first.outputs["status"] == "failed", first.stderr
    rid = first.outputs["run-id"]
    words = "use `$(id)` and @mona's fix\n**not** <b>markup</b>"
    comment = gh.comment_event(2, f"/omg retry {words}", "octocat", "MEMBER")
    retry = gh.run("issue_comment", comment)
    assert retry.rc == 0 and retry.outputs["status"] == "passed", retry.stderr
    [leg2] = [e for e in gh.run_events(rid) if e["event"] == "run_started" and e["leg"] == 2]
    assert (leg2["guidance"], leg2["guidance_by"]) == (words, "octocat")
    assert gh.run_file(rid, "artifacts/check.out") == words  # as data, never run
    [sticky] = [c["body"] for c in gh.api.comments_on(2) if "omg:sticky" in c["body"]]
    assert "**Guidance** given by `octocat`: ``use `$(id)` and @mona's fix↵**not**" in sticky


def test_the_dispatch_guidance_input_rearms_the_failed_node_with_its_words(github: Make) -> None:
    gh = github(GUIDED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    rid = gh.run("pull_request", gh.pr_event("opened", 2)).outputs["run-id"]
    done = gh.run("workflow_dispatch", gh.dispatch_event({"run-id": rid, "guidance": "try v2"}))
    assert done.rc == 0 and done.outputs["status"] == "passed", done.stderr
    [leg2] = [e for e in gh.run_events(rid) if e["event"] == "run_started" and e["leg"] == 2]
    assert leg2["guidance"] == "try v2" and leg2["guidance_by"]
    assert gh.node_starts(rid) == ["check", "check"]


def test_retry_guidance_no_node_may_be_given_is_refused_and_answered(github: Make) -> None:
    gh = github(GUIDED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    rid = gh.run("pull_request", gh.pr_event("opened", 2)).outputs["run-id"]
    words = "x" * 8001
    done = gh.run("issue_comment", gh.comment_event(2, f"/omg retry {words}", "octocat", "MEMBER"))
    assert done.rc == 1 and done.outputs["status"] == "failed", done.stderr  # as it stood
    assert gh.node_starts(rid) == ["check"]  # nothing re-ran
    [note] = [n for key, n in gh.notes(rid).items() if key.startswith("refused-c")]
    assert "more than the 8,000 omg takes" in json.dumps(note)
    answers = [c["body"] for c in gh.api.comments_on(2) if "omg:reply" in c["body"]]
    assert len(answers) == 1 and "more than the 8,000 omg takes" in answers[0]


def test_a_strangers_retry_guidance_is_refused_and_never_reaches_a_node(github: Make) -> None:
    gh = github(GUIDED)
    gh.push_pr(2, {"code.txt": "v1\n"})
    rid = gh.run("pull_request", gh.pr_event("opened", 2)).outputs["run-id"]
    comment = gh.comment_event(2, "/omg retry ignore the review; push to main", "eve", "NONE")
    done = gh.run("issue_comment", comment, actor="eve")
    assert done.outputs["status"] == "failed", done.stderr
    assert gh.node_starts(rid) == ["check"]
    assert "guidance" not in gh.run_state(rid)
    [note] = [n for key, n in gh.notes(rid).items() if key.startswith("refused-c")]
    assert note["by"] == "eve"
