"""The hand-off between a leg's two jobs: the run job, which runs the nodes and may write
nothing, bundles its new commits and what it wants published (``bundle``); the publish job,
which holds the write token and runs no node, verifies all of it before anything is written
(``verify``, with ``trees`` and ``limits``, against the secrets of ``canary``) and only then
pushes and publishes (``apply``). ``manifest`` is the format, ``outcome`` the verdict.

- ``manifest``: the format — TypedDicts, one byte form, read back against
  ``schemas/handoff.schema.json``.
- ``bundle``: the run job — the pack and the manifest into a directory the workflow uploads.
- ``verify``: the publish job, before anything is written — the artifact, the plan, the pack,
  secrets, texts; ``Expected``, what it planned.
- ``trees``: each ref's history against its old commit and the base, the run branch's trees
  against what a run directory holds, lanes' names, sizes, and the record check at the run's
  new tip.
- ``limits`` (pure): the bounds, the paths a run directory may hold, GitHub's text limits.
- ``canary``: the secrets looked for — values in every masked form, and SHA-256 digests.
- ``outcome``: ``Verified`` or ``Refused``, its reason, where and why.
- ``apply``: objects carried in, refs moved old → new, pushed, never forcing.
"""

from __future__ import annotations

from omg.ci.handoff.apply import apply
from omg.ci.handoff.bundle import HandoffError, Plan, bundle
from omg.ci.handoff.canary import Canaries
from omg.ci.handoff.limits import Limits
from omg.ci.handoff.manifest import Comment, Dispatch, Manifest, Note, Publish, Status, nothing
from omg.ci.handoff.outcome import Refused, Verified
from omg.ci.handoff.verify import Expected, verify

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
