"""The publish job's side once a hand-off is verified: its objects carried into the
repository, the run branch and lanes moved by compare-and-swap (old → new) and pushed,
never forcing."""

from __future__ import annotations

from collections.abc import Sequence

from omg.ci.handoff.outcome import Verified
from omg.git.quarantine import move
from omg.git.remote import GitToken


def apply(verified: Verified, remote: str | None, tokens: Sequence[GitToken] = ()) -> None:
    """Write ``verified``'s objects into its repository, move its refs there and push them to
    ``remote`` (None: local only); a ref that moved meanwhile is a GitError and the remote is
    left as it was. The objects held aside are dropped either way."""
    try:
        verified.quarantine.carry_in()
        move(verified.repo_root, verified.moves, remote, tokens)
    finally:
        verified.discard()
