"""The run job's publisher: its GitHub reads as ever, and every write this job would make — the
sticky comment, the commit status, the next leg's dispatch — is recorded into the hand-off's
``Publish`` instead (the run job's word: the publish job checks it, yet sends what it renders
from the verified record and its own plan); a reply to a comment is not even recorded."""

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
        """Nothing is posted: the publish job answers the comment from its own plan (this job's
        answer is never sent). The comment already answered is found as ever (a read)."""
        found = self.find_comment(number, marker)
        return int(found["id"]) if found is not None else 0

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
