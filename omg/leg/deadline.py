"""The leg's deadline: its ``--max-minutes`` budget on one clock, for each launch and retry."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Deadline:
    """When the leg's time budget runs out (``at``, on ``clock``); ``at`` None: no budget."""

    at: float | None = None
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    @classmethod
    def after(cls, minutes: float | None, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """The deadline ``minutes`` from now (None: none)."""
        return cls(None if minutes is None else clock() + minutes * 60, clock)

    def left(self) -> float | None:
        """Seconds left before the deadline (negative once past it; None: no budget)."""
        return None if self.at is None else self.at - self.clock()
