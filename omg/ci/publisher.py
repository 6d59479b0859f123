"""The run job's publisher: its GitHub reads as ever, and every write this job would make — the
sticky comment, the commit status, the next leg's dispatch — is recorded into the hand-off's
``Publish`` instead, for the publish job to send once it has verified the leg's record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omg.ci.handoff.manifest import Publish, nothing
from omg.errors import UsageError
from omg.github.client import GitHub, Quiet
from omg.github.commitstatus import StatusState

_STATES: tuple[StatusState, ...] = ("error", "failure", "pending", "success")


class Recorder(GitHub):
    """GitHub as the run job sees it: it reads, and what it would write lands in ``publish``
    (the last comment and status win: the publish job shows how the leg ended)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.publish: Publish = nothing()

    def upsert_comment(self, number: int, marker: str, body: str) -> int:
        self.publish["comment"] = {"body": self.mask.text(body)}
        return 0

    def update_comment(self, comment_id: int, body: str) -> None:
        self.publish["comment"] = {"body": self.mask.text(body)}

    def post_once(
        self, number: int, marker: str, body: str, *, quiet: Quiet | None = None
    ) -> int | None:
        raise UsageError(
            "a leg split in two jobs cannot answer a comment yet: run comment legs in one job "
            "(the action's `job: both`)"
        )

    def set_status(
        self, sha: str, context: str, state: str, description: str, target_url: str
    ) -> None:
        if state not in _STATES:
            raise UsageError(f"commit status state {state!r} is none of {', '.join(_STATES)}")
        self.publish["status"] = {
            "sha": sha,
            "context": context,
            "state": _STATES[_STATES.index(state)],
            "description": self.mask.text(description),
            "target_url": target_url,
        }

    def dispatch(
        self, workflow: str, ref: str, inputs: Mapping[str, str], *, title: str
    ) -> dict[str, str]:
        self.publish["dispatch"] = {"workflow": workflow, "ref": ref, "inputs": dict(inputs)}
        return {}
