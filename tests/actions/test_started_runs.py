"""Runs that do not start from a pull request: a workflow_dispatch naming a graph, and a
schedule — each through `omg leg`, reporting in the step summary and nowhere on a PR."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from omg.graph.workflows import DISPATCH_INPUT

from .kit import GRAPH_PATH, REPO, Job, Repo, action_env
from .stand_in import SHIPPED, declared, refused

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
    one = {"OMG_MAX_NODES": "1", "OMG_DISPATCH_WORKFLOW": DISPATCH_WF, **START}  # as shipped
    first = gh.run("schedule", schedule_event(), workflow=NIGHTLY_WF, extra=one)
    assert first.rc == 0 and first.outputs["status"] == "continuing", first.stderr
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


def through(gh: Repo, first: Job) -> list[Job]:
    """The legs a run's first leg chains: each dispatched leg run as GitHub runs it — the
    workflow it was sent to, with the inputs it was sent, in the env its omg step gives."""
    legs = [first]
    while legs[-1].outputs["next"] == "dispatch":
        sent = gh.api.runs[-1]
        event = gh.dispatch_event(sent["inputs"])
        env = action_env(sent["workflow"], sent["inputs"])
        legs.append(gh.run("workflow_dispatch", event, workflow=sent["workflow"],
                           run_id=sent["id"], extra={**env, "OMG_MAX_NODES": "1"}))  # fmt: skip
    return legs


def test_a_run_a_dispatch_started_gets_past_its_first_leg(github: Make) -> None:
    """A leg sends the next leg `run-id` alone; omg-dispatch.yml takes that (its `graph` is
    not required), and the dispatched leg continues the run from its record."""
    gh = github(TWO)
    inputs = {"graph": GRAPH_PATH, "inputs": "who=octocat"}
    env = {**action_env(DISPATCH_WF, inputs), "OMG_MAX_NODES": "1"}
    first = gh.run("workflow_dispatch", gh.dispatch_event(inputs), workflow=DISPATCH_WF,
                   run_id=4242, extra=env)  # fmt: skip
    assert first.rc == 0 and first.outputs["next"] == "dispatch", first.stderr
    rid = "dispatch-nightly-4242"
    [sent] = gh.api.runs
    assert (sent["workflow"], sent["inputs"]) == (DISPATCH_WF, {DISPATCH_INPUT: rid})
    legs = through(gh, first)
    assert [(j.rc, j.outputs["status"]) for j in legs] == [(0, "continuing"), (0, "passed")]
    assert gh.node_starts(rid) == ["hello", "bye"]
    assert gh.run_file(rid, "artifacts/hello.out") == "hello octocat\n"


def test_the_nightly_run_chains_its_legs_through_the_dispatch_workflow(github: Make) -> None:
    gh = github(TWO)
    one = {"OMG_MAX_NODES": "1", "OMG_DISPATCH_WORKFLOW": DISPATCH_WF, **START}
    first = gh.run("schedule", schedule_event(), workflow=NIGHTLY_WF, extra=one)
    assert first.rc == 0 and first.outputs["next"] == "dispatch", first.stderr
    legs = through(gh, first)
    assert [(j.rc, j.outputs["status"]) for j in legs] == [(0, "continuing"), (0, "passed")]
    assert gh.node_starts(first.outputs["run-id"]) == ["hello", "bye"]


def shipped_texts() -> dict[str, str]:
    """Every shipped workflow by name, and every template `omg init` writes (rendered) as
    ``templates/<name>``."""
    templates = Path(__file__).resolve().parents[2] / "omg" / "templates"
    rendered = {f"templates/{p.name}": p.read_text().replace("@@USES@@", "./") for p in
                templates.glob("*.yml")}  # fmt: skip
    return {**{p.name: p.read_text() for p in SHIPPED.glob("*.yml")}, **rendered}


def test_every_workflow_a_leg_dispatches_takes_what_the_leg_sends() -> None:
    import yaml

    texts = shipped_texts()
    targets = []
    for name, text in texts.items():
        for job in yaml.safe_load(text)["jobs"].values():
            for step in job.get("steps", []):
                given = step.get("with") or {}
                if step.get("uses") == "./" and given.get("fanout", "") in ("", "fold"):
                    folder = name[: name.rfind("/") + 1]
                    targets.append(folder + (given.get("dispatch-workflow") or name.split("/")[-1]))
    assert {"omg-dispatch.yml", "omg-resume.yml", "omg-fanout.yml"} <= set(targets)
    assert "templates/omg-resume.yml" in targets
    for target in targets:
        assert refused(declared(texts[target]), {DISPATCH_INPUT: "r"}) == "", target


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ({"run-id": "r"}, ""),
        ({"run-id": "r", "graph": "g.yaml", "mode": "b", "fast": "true"}, ""),
        ({}, "Required input 'run-id' not provided"),
        ({"run-id": ""}, "Required input 'run-id' not provided"),
        ({"run-id": "r", "other": "x"}, 'Unexpected inputs provided: ["other"]'),
        ({"run-id": "r", "mode": "c"}, "Provided value 'c' for input 'mode' not in the list"),
        ({"run-id": "r", "fast": "yes"}, "Provided value 'yes' for input 'fast' is not a valid"),
        ({f"i{n}": "x" for n in range(26)}, "up to 25 `inputs`"),
    ],
)
def test_the_stand_in_refuses_a_dispatch_as_github_does(given: dict[str, str], why: str) -> None:
    spec = declared(
        "on:\n  workflow_dispatch:\n    inputs:\n      run-id: {required: true}\n"
        "      graph: {default: ''}\n      mode: {type: choice, options: [a, b], default: a}\n"
        "      fast: {type: boolean, default: false}\njobs: {}\n"
    )
    got = refused(spec, given)
    assert (why in got and why != "") if why else got == ""
    assert refused(declared("on: [push]\njobs: {}\n"), {"run-id": "r"}) == (
        "Workflow does not have 'workflow_dispatch' trigger"
    )


def test_a_dispatch_github_would_refuse_fails_the_leg_that_sends_it(github: Make) -> None:
    """The simulation's check is able to fail: the dispatch workflow as it was shipped, with
    `graph` required, stops the run at its first leg."""
    gh = github(TWO)
    text = (SHIPPED / DISPATCH_WF).read_text()
    gh.api.workflows[DISPATCH_WF] = declared(text.replace("required: false", "required: true"))
    inputs = {"graph": GRAPH_PATH}
    env = {**action_env(DISPATCH_WF, inputs), "OMG_MAX_NODES": "1"}
    first = gh.run("workflow_dispatch", gh.dispatch_event(inputs), workflow=DISPATCH_WF,
                   run_id=4242, extra=env)  # fmt: skip
    assert first.rc == 3 and gh.api.runs == [], first.stderr
    assert "HTTP 422 Required input 'graph' not provided" in first.stderr
