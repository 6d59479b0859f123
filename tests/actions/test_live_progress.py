"""A leg's live progress on the PR: the sticky comment and the status change as nodes start
and settle, at most once per interval, and always at the leg's end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from omg.ci import pace
from omg.ci.live import LiveReport
from omg.ci.report_md import Links
from omg.github.client import GitHub
from omg.graph.load import load_graph
from omg.mask import NOTHING
from omg.state import Event, State

from .kit import Repo
from .stand_in import Fault, StandIn

FOUR = """\
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
  - id: d
    depends_on: [c]
    run: echo d
"""

Make = Callable[[str], Repo]


@pytest.mark.parametrize(
    ("now", "last", "interval", "due"),
    [
        (0.0, 0.0, 20.0, False),  # the leg's start was the last update
        (19.9, 0.0, 20.0, False),
        (20.0, 0.0, 20.0, True),
        (45.0, 20.0, 20.0, True),
        (39.0, 20.0, 20.0, False),
        (5.0, 5.0, 0.0, True),  # no throttle: every change goes out
    ],
)
def test_an_update_goes_out_at_most_once_per_interval(
    now: float, last: float, interval: float, due: bool
) -> None:
    assert pace.due(now, last, interval) is due


@pytest.mark.parametrize(
    ("event", "kind", "shown"),
    [
        ("node_started", "agent", True),
        ("node_started", "shell", False),  # a shell node is quick: its verdict is news
        ("node_passed", "shell", True),
        ("node_failed", "agent", True),
        ("gate_paused", "gate", False),  # the leg's end reports a pause
        ("node_retried", "agent", False),
    ],
)
def test_agent_starts_and_every_settle_are_worth_showing(
    event: str, kind: str, shown: bool
) -> None:
    assert pace.worth_showing(event, kind) is shown


def test_running_nodes_are_shown_oldest_first_with_their_elapsed_time() -> None:
    assert pace.running_line({"review": 50.0, "build": 10.0}, 52.4) == "build 42s, review 2s"


def statuses(api: StandIn, head: str) -> list[str]:
    return [s["description"] for s in api.statuses.get(head, [])]


def test_with_no_throttle_every_settled_node_updates_the_pr(github: Make) -> None:
    gh = github(FOUR)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    job = gh.run("pull_request", gh.pr_event("opened", 2), extra={"OMG_PROGRESS_SECONDS": "0"})
    assert job.outputs["status"] == "passed", job.stderr
    shown = statuses(gh.api, head)
    assert shown == [
        "running leg 1",
        "running leg 1: between nodes; 1 settled",
        "running leg 1: between nodes; 2 settled",
        "running leg 1: between nodes; 3 settled",
        "running leg 1: between nodes; 4 settled",
        "passed",
    ]
    # the comment: found once, then edited in place (one PATCH per update and the end)
    assert len(gh.api.calls("POST", r"/issues/\d+/comments$")) == 1
    assert len(gh.api.calls("PATCH", r"/issues/comments/")) == 4
    [body] = [c["body"] for c in gh.api.comments_on(2)]
    assert "passed" in body
    # statuses: start, 4 live, end; comments: found (GET) and posted, 3 edits, found and edited
    assert "GitHub REST calls of this job: 13: " in job.summary, job.summary
    assert "`POST /repos/{owner}/{repo}/statuses/{id}` 6" in job.summary


def test_a_throttle_holds_updates_back_but_the_legs_end_is_always_shown(github: Make) -> None:
    gh = github(FOUR)
    head = gh.push_pr(2, {"code.txt": "v1\n"})
    job = gh.run("pull_request", gh.pr_event("opened", 2), extra={"OMG_PROGRESS_SECONDS": "3600"})
    assert job.outputs["status"] == "passed", job.stderr
    assert statuses(gh.api, head) == ["running leg 1", "passed"]
    assert len(gh.api.comments_on(2)) == 1


def test_progress_on_slow_nodes_is_throttled_by_the_clock(tmp_path: Path, api: StandIn) -> None:
    """A leg of slow agent nodes on an injected clock: each start and settle lands 8 s after
    the last; with a 20 s throttle every third one goes out."""
    path = tmp_path / "g.yaml"
    path.write_text(
        "name: slow\nnodes:\n" + "".join(f"  - id: n{i}\n    prompt: work {i}\n" for i in range(5))
    )
    graph = load_graph(path)
    now = [0.0]
    gh = GitHub(api.url, api.repo, "t")
    live = LiveReport(
        gh, graph, "a" * 40, None, Links("", "https://github.com/x/y/actions/runs/1"), NOTHING,
        [], 2, interval=20.0, clock=lambda: now[0],
    )  # fmt: skip
    nodes: dict[str, Any] = {}
    for i in range(5):
        for kind in ("node_started", "node_passed"):
            now[0] += 8.0
            if kind == "node_passed":
                nodes[f"n{i}"] = {"verdict": "PASS"}
            live(cast(Event, {"event": kind, "node_id": f"n{i}"}), cast(State, {"nodes": nodes}))
    # 10 changes at t = 8, 16, …, 80: sent at 24, 48, 72; the rest held for the next or the end
    assert (live.sent, live.held) == (3, 7)
    assert statuses(api, "a" * 40) == [
        "running leg 2: n1 0s; 1 settled",
        "running leg 2: between nodes; 3 settled",
        "running leg 2: n4 0s; 4 settled",
    ]


def test_a_refused_status_stops_the_live_statuses_and_never_the_comment(
    tmp_path: Path, api: StandIn
) -> None:
    """A token without ``statuses: write``: GitHub answers the first status 403; the live
    updates go on editing the comment, and ask for no status again."""
    from omg.state.fold import empty_state

    path = tmp_path / "g.yaml"
    nodes = "".join(f"  - {{id: n{i}, run: 'true'}}\n" for i in range(3))
    path.write_text(f"name: three\nnodes:\n{nodes}")
    api.faults.append(Fault("POST", r"/statuses/", "403", times=10_000))
    gh = GitHub(api.url, api.repo, "t")
    live = LiveReport(
        gh, load_graph(path), "a" * 40, 2, Links("", "https://github.com/x/y/actions/runs/1"),
        NOTHING, [], 1, interval=0.0,
    )  # fmt: skip
    state = empty_state()
    for i in range(3):
        state["nodes"][f"n{i}"] = {"verdict": "PASS"}  # type: ignore[typeddict-item]
        passed = {"event": "node_passed", "node_id": f"n{i}", "leg": 1, "seq": i + 1,
                  "ts": "2026-01-01T00:00:00Z", "verdict": "PASS", "cost_usd": 0.0}  # fmt: skip
        live(cast(Event, passed), state)
    assert (live.broken, live.sent) == (False, 3)
    assert len(api.calls("POST", r"/statuses/")) == 1
    assert len(api.calls("POST", r"/issues/2/comments$")) == 1  # then edited by id
    assert len(api.calls("PATCH", r"/issues/comments/")) == 2
