"""A rehearsal: for the block of a `--rehearse SCRIPT` run, every agent node's claude CLI is
pointed at the scripted stand-in — no network, no credentials, nothing spent."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omg.runners.registry import rehearsal_env


@contextmanager
def rehearsal(script: Path) -> Iterator[dict[str, str]]:
    """The stand-in serving ``script`` for the block; yields the children's environment."""
    from omg.stubmodel.script import load
    from omg.stubmodel.server import StubModel

    stub = StubModel(load(script))
    with stub.serve():
        print(f"Rehearsing with {script} (the stand-in model at {stub.url})", file=sys.stderr)
        yield rehearsal_env(os.environ, stub.url)
    unmatched = [s for s in stub.seen if not s.rule]
    if unmatched:
        print(
            f"warning: {len(unmatched)} request(s) matched no rule of {script}; "
            "their nodes got the stand-in's default answer",
            file=sys.stderr,
        )
