"""`omg stub-model`: the scripted stand-in model on its own, for a claude CLI started by hand
(`--rehearse SCRIPT` runs it for a run's block: omg/cli/rehearsal.py)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from omg.cli import exits
from omg.runners.registry import stub_endpoint


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
