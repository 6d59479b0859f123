"""The hand-off between a leg's two jobs: the run job, which runs the nodes and may write
nothing, bundles its new commits and what it wants published (``bundle``); the publish job,
which holds the write token and runs no node, verifies all of it before anything is written
(``verify``, with ``trees`` and ``limits``, against the secrets of ``canary``) and only then
pushes and publishes (``apply``). ``manifest`` is the format, ``outcome`` the verdict."""

from __future__ import annotations

from omg.handoff.apply import apply
from omg.handoff.bundle import HandoffError, Plan, bundle
from omg.handoff.canary import Canaries
from omg.handoff.limits import Limits
from omg.handoff.manifest import Comment, Dispatch, Manifest, Note, Publish, Status, nothing
from omg.handoff.outcome import Refused, Verified
from omg.handoff.verify import Expected, verify

__all__ = [
    "Canaries",
    "Comment",
    "Dispatch",
    "Expected",
    "HandoffError",
    "Limits",
    "Manifest",
    "Note",
    "Plan",
    "Publish",
    "Refused",
    "Status",
    "Verified",
    "apply",
    "bundle",
    "nothing",
    "verify",
]
