"""The one error handler every command runs under: a refusal's words and exit code, an
interrupt's, and a bug's traceback (exit 70) — the typer app's and `omg run`'s fast path's."""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Mapping

from omg.cli import exits
from omg.cli.next import next_step
from omg.errors import OmgError


def guarded(call: Callable[[], object], outcome: Mapping[str, str | None]) -> None:
    """Run ``call``; an ``OmgError`` becomes its words and exit code (after the outcome line
    ``--format json`` asked for, when ``outcome`` names the run), anything else a bug's."""
    try:
        call()
    except OmgError as exc:
        if outcome:  # run/resume --format json: the refusal is their outcome line
            from omg.cli import machine

            error = _masked(str(exc))
            line = machine.refusal(outcome["run_id"], exits.BY_REFUSAL[exc.kind], error)
            print(machine.dumps(line))
        hint = f"; {next_step(exc.hint)}" if exc.hint is not None else ""
        print(_masked(f"omg: {exc}{hint}"), file=sys.stderr)
        sys.exit(exits.BY_REFUSAL[exc.kind])
    except KeyboardInterrupt:
        print("omg: interrupted", file=sys.stderr)
        sys.exit(exits.INTERRUPTED)
    except Exception:
        print(
            "omg: unexpected error — this is a bug in omg; please report it with the "
            "traceback below",
            file=sys.stderr,
        )
        print(_masked(traceback.format_exc()), end="", file=sys.stderr)
        sys.exit(exits.BUG)


def _masked(text: str) -> str:
    """An error as a job log may show it: omg's own secrets masked (an error can quote one)."""
    from omg.mask import Masker

    return Masker.from_env(os.environ).text(text)
