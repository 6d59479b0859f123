"""Runs that do not start from a pull request: a workflow_dispatch naming a graph, and a
schedule — each through `omg leg`, reporting in the step summary and nowhere on a PR."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .kit import REPO, Repo

TWO = """\
name: nightly
inputs:
  who: {default: nobody}
nodes:
  - id: hello
    run: echo "hello {{ inputs.who }}"
  - id: bye
    depends_on: [hello]
    run: echo bye
"""

Make = Callable[[str], Repo]
DISPATCH_WF = "omg-dispatch.yml"
NIGHTLY_WF = "omg-nightly.yml"
#: the nightly workflow's `on-schedule: start` (a schedule elsewhere continues waiting runs)
START = {"OMG_ON_SCHEDULE": "start"}


def schedule_event() -> dict[str, Any]:
    """What GitHub writes for a schedule trigger: the cron line and the repository."""
    owner, name = REPO.split("/")
    return {
        "schedule": "17 3 * * *",
        "repository": {"full_name": REPO, "name": name, "owner": {"login": owner}},
        "workflow": f".github/workflows/{NIGHTLY_WF}",
    }


def test_a_dispatch_naming_a_graph_starts_a_run_on_the_dispatched_ref(github: Make) -> None:
    gh = github(TWO)
    event = gh.dispatch_event({"graph": "graphs/pr.yaml"})
    job = gh.run(
        "workflow_dispatch", event, workflow=DISPATCH_WF, run_id=4242,
        extra={"OMG_INPUTS": "who=octocat"},
    )  # fmt: skip
    assert job.rc == 0, job.stderr
    rid = "dispatch-nightly-4242"
    assert job.outputs["status"] == "passed" and job.outputs["run-id"] == rid
    assert gh.run_file(rid, "artifacts/hello.out") == "hello octocat\n"
    state = gh.run_state(rid)
    assert "pull_request" not in state
    assert state["legs"][0]["ci"]["event"] == "workflow_dispatch"
    # the step summary reports it; no PR hears of it
    assert "`nightly` · passed" in job.summary
    assert gh.api.comments == [] and gh.api.statuses == {}


def test_a_dispatch_naming_an_existing_run_continues_it(github: Make) -> None:
    gh = github(TWO)
    first = gh.run(
        "workflow_dispatch",
        gh.dispatch_event({"graph": "graphs/pr.yaml", "run-id": "mine"}),
        workflow=DISPATCH_WF,
        extra={"OMG_MAX_NODES": "1"},
    )
    assert first.outputs["status"] == "continuing", first.stderr
    assert gh.node_starts("mine") == ["hello"]
    # the same run id again (a person, or the leg's own dispatch): continued, not restarted
    again = gh.run(
        "workflow_dispatch",
        gh.dispatch_event({"graph": "graphs/pr.yaml", "run-id": "mine"}),
        workflow=DISPATCH_WF,
    )
    assert again.outputs["status"] == "passed", again.stderr
    assert gh.node_starts("mine") == ["hello", "bye"]
    assert len(gh.run_state("mine")["legs"]) == 2


def test_two_schedule_events_on_one_day_run_the_graph_once(github: Make) -> None:
    gh = github(TWO)
    first = gh.run("schedule", schedule_event(), workflow=NIGHTLY_WF, extra=START)
    assert first.rc == 0, first.stderr
    rid = first.outputs["run-id"]
    assert rid.startswith("schedule-nightly-") and len(rid) == len("schedule-nightly-20261204")
    assert first.outputs["status"] == "passed"
    second = gh.run("schedule", schedule_event(), workflow=NIGHTLY_WF, extra=START)
    assert second.rc == 0, second.stderr
    assert second.outputs["status"] == "skipped"
    assert f"today's scheduled run {rid} is passed already" in second.stderr
    assert gh.run_branches() == [f"refs/heads/omg/runs/{rid}"]
    assert gh.node_starts(rid) == ["hello", "bye"]


def test_a_second_schedule_event_continues_a_run_with_work_left(github: Make) -> None:
    gh = github(TWO)
    one = {"OMG_MAX_NODES": "1", "OMG_DISPATCH_WORKFLOW": "", **START}
    first = gh.run("schedule", schedule_event(), workflow=NIGHTLY_WF, extra=one)
    assert first.outputs["status"] == "continuing", first.stderr
    rid = first.outputs["run-id"]
    second = gh.run("schedule", schedule_event(), workflow=NIGHTLY_WF, extra=START)
    assert second.outputs["status"] == "passed", second.stderr
    assert gh.run_branches() == [f"refs/heads/omg/runs/{rid}"]
    assert gh.node_starts(rid) == ["hello", "bye"]


def test_a_schedule_without_on_schedule_start_starts_no_run_and_a_wrong_value_is_refused(
    github: Make,
) -> None:
    gh = github(TWO)
    plain = gh.run("schedule", schedule_event(), workflow=NIGHTLY_WF)
    assert plain.rc == 0 and plain.outputs["status"] == "skipped", plain.stderr
    assert "no run waits to be continued now" in plain.stderr
    wrong = gh.run(
        "schedule", schedule_event(), workflow=NIGHTLY_WF, extra={"OMG_ON_SCHEDULE": "later"}
    )
    assert wrong.rc == 2, wrong.stderr
    assert "--on-schedule 'later' must be start" in wrong.stderr
    assert "Traceback" not in wrong.stderr
    assert gh.run_branches() == []
