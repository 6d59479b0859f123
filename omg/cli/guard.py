"""The one error handler every command runs under: a refusal's words and exit code, an
interrupt's, and a bug's traceback (exit 70) — the typer app's and the fast paths' (`fastrun`,
`fastleg`), which end a command an interrupt, an end of input or a closed stdout stops as the
typer app ends it (``typer_ending``)."""

from __future__ import annotations

import errno
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


def typer_ending(call: Callable[[], int]) -> int:
    """``call``'s exit code; an interrupt, an end of input or a closed stdout ending it as the
    typer app ends a command (130, 1, 1)."""
    try:
        return call()
    except KeyboardInterrupt:
        return exits.INTERRUPTED  # as typer ends an interrupted command: without a word
    except EOFError:
        print("\nAborted!", file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        for stream in (sys.stdout, sys.stderr):  # nothing more to a closed pipe, at exit too
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        return 1


def _masked(text: str) -> str:
    """An error as a job log may show it: omg's own secrets masked (an error can quote one)."""
    from omg.mask import Masker

    return Masker.from_env(os.environ).text(text)
