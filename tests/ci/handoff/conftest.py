"""The hand-off tests' fixtures; the helpers they use live in ``handoffkit``."""

from tests.ci.handoff.handoffkit import legs, stage

__all__ = ["legs", "stage"]
