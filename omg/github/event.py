"""The trigger: a webhook payload (GITHUB_EVENT_PATH) read into the few facts a leg acts on."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omg.errors import UsageError
from omg.words import undecodable

#: The pull_request actions that start or continue a review run.
PR_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")


@dataclass(frozen=True)
class PullRequest:
    """A pull_request event: which PR, which head, and whether the head lives in a fork."""

    action: str
    number: int
    head_sha: str
    head_ref: str
    before: str  # synchronize: the head the push replaced ('' otherwise)
    fork: bool
    draft: bool
    default_branch: str = ""  # the repository's, where dispatched legs run
    base_sha: str = ""  # the commit the PR targets: its graph judges the PR
    base_ref: str = ""  # the branch it targets


@dataclass(frozen=True)
class Comment:
    """An issue_comment event: what was written, by whom, where."""

    action: str
    number: int  # the issue or pull request number
    on_pull_request: bool
    comment_id: int
    body: str
    login: str
    association: str  # OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, ...
    bot: bool


@dataclass(frozen=True)
class Dispatch:
    """A workflow_dispatch event: its inputs, as strings."""

    inputs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Schedule:
    """A schedule event: the cron line that fired."""

    cron: str = ""


@dataclass(frozen=True)
class Other:
    """Any other event: omg has nothing to do on it."""

    name: str


Trigger = PullRequest | Comment | Dispatch | Schedule | Other


EVENTS = ("pull_request", "pull_request_target", "issue_comment", "workflow_dispatch", "schedule")


def read_trigger(event_name: str, path: Path | None) -> Trigger:
    """The trigger of this job, from the event name and the payload file GitHub wrote."""
    if event_name not in EVENTS:
        return Other(event_name)
    if path is None:
        raise UsageError(
            f"GITHUB_EVENT_PATH is not set, so the {event_name} payload cannot be read; "
            "GitHub Actions sets it for every job"
        )
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc}") from exc
    if not isinstance(payload, dict):
        raise UsageError(f"the event payload {path} is not a JSON object")
    try:
        if event_name == "issue_comment":
            return _comment(payload)
        if event_name == "schedule":
            return Schedule(str(payload.get("schedule") or ""))
        if event_name == "workflow_dispatch":
            inputs = payload.get("inputs") or {}
            given = {str(k): "" if v is None else str(v) for k, v in inputs.items()}
            for name, value in given.items():
                _text(f"the workflow_dispatch input {name!r}", value)
            return Dispatch(given)
        return _pull_request(payload)
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(
            f"the {event_name} payload {path} lacks {exc}; it is not the shape GitHub sends"
        ) from exc


def _text(what: str, value: str) -> str:
    """``value``, refused by name when it is not valid UTF-8 (a ``\\udXXX`` escape no
    encoder pairs): no record, prompt or reply can hold it."""
    bad = undecodable(value)
    if bad:
        raise UsageError(f"{what} is not valid UTF-8 ({bad}); give it as UTF-8 text")
    return value


def _pull_request(p: dict[str, Any]) -> PullRequest:
    pr = p["pull_request"]
    head_repo = (pr["head"].get("repo") or {}).get("full_name")
    base_repo = p["repository"]["full_name"]
    return PullRequest(
        action=str(p["action"]),
        number=int(p.get("number") or pr["number"]),
        head_sha=str(pr["head"]["sha"]),
        head_ref=str(pr["head"]["ref"]),
        before=str(p.get("before") or ""),
        fork=head_repo != base_repo,  # a deleted fork has no repo: read-only all the same
        draft=bool(pr.get("draft")),
        default_branch=str(p["repository"].get("default_branch") or ""),
        base_sha=str(pr["base"]["sha"]),
        base_ref=str(pr["base"]["ref"]),
    )


def _comment(p: dict[str, Any]) -> Comment:
    c, issue = p["comment"], p["issue"]
    login = str(c["user"]["login"])
    return Comment(
        action=str(p["action"]),
        number=int(issue["number"]),
        on_pull_request=bool(issue.get("pull_request")),
        comment_id=int(c["id"]),
        body=_text("the comment", str(c.get("body") or "")),
        login=login,
        association=str(c.get("author_association") or "NONE"),
        bot=c["user"].get("type") == "Bot" or login.endswith("[bot]"),
    )
