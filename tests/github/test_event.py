"""Trigger payloads, read from the vendored webhook examples GitHub sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omg.errors import UsageError
from omg.github.event import Comment, Dispatch, Other, PullRequest, read_trigger

PAYLOADS = Path(__file__).parent.parent / "actions" / "payloads"


def test_a_pull_request_payload_gives_number_head_and_fork() -> None:
    t = read_trigger("pull_request", PAYLOADS / "pull_request.opened.json")
    assert isinstance(t, PullRequest)
    assert (t.action, t.number, t.head_ref, t.fork) == ("opened", 2, "changes", False)
    assert len(t.head_sha) == 40 and t.before == ""


def test_a_pull_request_payload_names_the_base_whose_graph_judges_it() -> None:
    t = read_trigger("pull_request", PAYLOADS / "pull_request.opened.json")
    data = json.loads((PAYLOADS / "pull_request.opened.json").read_text())
    assert isinstance(t, PullRequest)
    assert (t.base_sha, t.base_ref) == (data["pull_request"]["base"]["sha"], "master")


def test_a_synchronize_payload_names_the_head_it_replaced() -> None:
    t = read_trigger("pull_request", PAYLOADS / "pull_request.synchronize.json")
    data = json.loads((PAYLOADS / "pull_request.synchronize.json").read_text())
    assert isinstance(t, PullRequest) and t.before == data["before"]


def test_a_head_in_another_repository_is_a_fork(tmp_path: Path) -> None:
    data = json.loads((PAYLOADS / "pull_request.opened.json").read_text())
    data["pull_request"]["head"]["repo"] = None  # a deleted fork
    (tmp_path / "e.json").write_text(json.dumps(data))
    t = read_trigger("pull_request", tmp_path / "e.json")
    assert isinstance(t, PullRequest) and t.fork


def test_an_issue_comment_says_whether_it_is_on_a_pull_request() -> None:
    t = read_trigger("issue_comment", PAYLOADS / "issue_comment.created.json")
    assert isinstance(t, Comment)
    assert (t.login, t.association, t.bot, t.on_pull_request) == (
        "Codertocat",
        "OWNER",
        False,
        False,
    )


def test_dispatch_inputs_are_strings() -> None:
    t = read_trigger("workflow_dispatch", PAYLOADS / "workflow_dispatch.json")
    assert t == Dispatch({})


def test_other_events_need_no_payload() -> None:
    assert read_trigger("push", None) == Other("push")


def test_a_payload_of_the_wrong_shape_is_refused_with_its_path(tmp_path: Path) -> None:
    (tmp_path / "e.json").write_text('{"action": "opened"}')
    with pytest.raises(UsageError, match=r"e\.json lacks 'pull_request'"):
        read_trigger("pull_request", tmp_path / "e.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(UsageError, match="cannot read the event payload"):
        read_trigger("issue_comment", tmp_path / "bad.json")
