"""Rehearsals: `omg stub-model` on its own, and `--rehearse SCRIPT` pointing every agent node's
claude CLI at the scripted stand-in — no network, no credentials, nothing spent."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from omg.cli import exits
from omg.runners.registry import rehearsal_env, stub_endpoint


@contextmanager
def rehearsal(script: Path, config_dir: Path) -> Iterator[dict[str, str]]:
    """The stand-in serving ``script`` for the block; yields the children's environment."""
    from omg.stubmodel import StubModel, load

    stub = StubModel(load(script))
    config_dir.mkdir(parents=True, exist_ok=True)
    with stub.serve():
        print(f"Rehearsing with {script} (the stand-in model at {stub.url})", file=sys.stderr)
        yield rehearsal_env(os.environ, stub.url, config_dir)
    unmatched = [s for s in stub.seen if not s.rule]
    if unmatched:
        print(
            f"warning: {len(unmatched)} request(s) matched no rule of {script}; "
            "their nodes got the stand-in's default answer",
            file=sys.stderr,
        )


def serve(script: Path, port: int) -> int:
    """`omg stub-model`: serve until interrupted, one stderr line per request."""
    from omg.stubmodel import StubModel, load

    stub = StubModel(load(script), port=port)
    with stub.serve():
        print(f"omg stub-model: serving {script} at {stub.url}", file=sys.stderr)
        print("export " + " ".join(f"{k}={v}" for k, v in stub_endpoint(stub.url).items()))
        sys.stdout.flush()
        shown = 0
        stop = threading.Event()
        try:
            while not stop.wait(0.2):
                for seen in stub.seen[shown:]:
                    rule = seen.rule or "(no rule: the default answer)"
                    node = seen.request.node or "-"
                    print(
                        f"  {seen.status} node {node} call {seen.request.call} "
                        f"turn {seen.request.turn}: {rule}",
                        file=sys.stderr,
                    )
                shown = len(stub.seen)
        except KeyboardInterrupt:
            print("omg stub-model: stopped", file=sys.stderr)
    return exits.PASSED
