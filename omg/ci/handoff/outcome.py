"""What a publish job learns of a hand-off: ``Verified`` (what may be pushed and published)
or ``Refused`` (what was wrong, where, and why — and that nothing of it was written)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from omg.ci.handoff.manifest import Publish

if TYPE_CHECKING:
    from omg.git.quarantine import Quarantine, RefMove

#: Why a hand-off is refused: its artifact directory, its manifest, a difference from the
#: plan, its pack, the objects in it, a ref's history, a tree, a size, the run's record, a
#: secret, or a text GitHub would refuse.
Reason = Literal[
    "artifact", "manifest", "plan", "pack", "objects", "ancestry", "tree", "size", "record",
    "secret", "text",
]  # fmt: skip


@dataclass(frozen=True)
class Refused:
    """A hand-off refused before anything of it was written: ``where`` (a file of the
    artifact, a ref, a path in a ref's tree, a text) and ``why``."""

    reason: Reason
    where: str
    why: str

    @property
    def message(self) -> str:
        """One line for the failure the publish job reports."""
        return (
            f"The leg's output was refused ({self.reason}): {self.where} {self.why}. Nothing "
            "of it was pushed or published."
        )


class Refusal(Exception):
    """Raised inside the checks; ``verify`` returns it as a ``Refused``."""

    def __init__(self, reason: Reason, where: str, why: str) -> None:
        super().__init__(f"{where} {why}")
        self.refused = Refused(reason, where, why)


@dataclass(frozen=True)
class Verified:
    """A hand-off every check passed: the refs to move (old → new), what to publish, and its
    objects held aside in the quarantine until ``apply`` carries them in."""

    run_id: str
    leg: int
    moves: tuple[RefMove, ...]
    publish: Publish
    objects: int
    pack_bytes: int
    repo_root: Path
    quarantine: Quarantine = field(repr=False, compare=False)

    def discard(self) -> None:
        """Drop the objects held aside (a publish job that will not apply it)."""
        self.quarantine.close()
