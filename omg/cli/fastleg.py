"""`omg leg`'s command line and environment read without typer, so a GitHub job's leg starts
sooner.

Read here: the forms the action runs (``omg leg``, with ``--hand-off DIR``, ``--node ID``,
``--fold``), any other option of `omg leg` as ``--option value`` or ``--option=value``, and the
``OMG_*`` variables typer reads the rest from — one set to the empty string, as typer takes it,
unset; ``OMG_FOLD`` by typer's words for yes and no. Anything else — ``--help``, an unknown
option, an option given twice, a value that starts with ``-``, a number that is not plain digits
(with one point, for an amount) or is out of its range, another ``OMG_FOLD``, a path typer would
refuse as unreadable, shell completion — is left to the typer app, which answers it as it always
has (``tests/cli/test_fastleg.py`` holds the two to the same values). Both run `jobs.leg` under
the one error handler (`guard`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from omg.cli.fastargs import AMOUNT, DEFAULT_RUNS, WHOLE, Unusual, path, plain, scan
from omg.cli.guard import guarded, typer_ending
from omg.cli.jobs import LegLine, leg

#: `omg leg`'s parameters: each one's spellings and the variable typer reads it from.
OPTIONS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "graph": (("--graph",), "OMG_GRAPH"),
    "run_id": (("--run-id",), "OMG_RUN_ID"),
    "max_minutes": (("--max-minutes",), "OMG_MAX_MINUTES"),
    "max_nodes": (("--max-nodes",), "OMG_MAX_NODES"),
    "push": (("--push",), "OMG_PUSH"),
    "dispatch_workflow": (("--dispatch-workflow",), "OMG_DISPATCH_WORKFLOW"),
    "input": (("--input", "-i"), None),
    "node": (("--node",), "OMG_NODE"),
    "fold": (("--fold",), "OMG_FOLD"),
    "base": (("--base",), "OMG_BASE"),
    "max_jobs": (("--max-jobs",), "OMG_MAX_JOBS"),
    "pr_budget_usd": (("--pr-budget-usd",), "OMG_PR_BUDGET_USD"),
    "day_budget_usd": (("--day-budget-usd",), "OMG_DAY_BUDGET_USD"),
    "limit_wait": (("--limit-wait",), "OMG_LIMIT_WAIT"),
    "on_schedule": (("--on-schedule",), "OMG_ON_SCHEDULE"),
    "hand_off": (("--hand-off",), "OMG_HAND_OFF"),
    "runs_dir": (("--runs-dir",), None),
}
#: The flag (it takes no value) and the words typer reads its variable by (click's, compared
#: stripped and lower-cased).
FLAG = "fold"
BOOLEAN = {
    **{"1": True, "yes": True, "true": True, "on": True, "t": True, "y": True},
    **{"0": False, "no": False, "false": False, "off": False, "f": False, "n": False, "": False},
}
#: The paths (typer checks a default path too: the runs directory's).
PATHS = frozenset({"graph", "hand_off", "runs_dir"})
#: The numbers: whole ones, amounts, and the ranges typer holds them to (None: no bound).
WHOLES = frozenset({"max_nodes", "max_jobs"})
AMOUNTS = frozenset({"max_minutes", "pr_budget_usd", "day_budget_usd", "limit_wait"})
RANGES: dict[str, tuple[int | None, int | None]] = {
    "max_nodes": (0, None),
    "max_jobs": (1, 256),
    "max_minutes": (0, None),
    "limit_wait": (0, 86400),
}
#: What typer reads from the environment besides the options: shell completion.
TYPER_ENV = ("_OMG_COMPLETE",)
_SPELLINGS = {spelling: name for name, (spellings, _) in OPTIONS.items() for spelling in spellings}
_FLAGS = {s: name for s, name in _SPELLINGS.items() if name == FLAG}
_VALUED = {s: name for s, name in _SPELLINGS.items() if name != FLAG}


def parse(args: list[str], env: Mapping[str, str]) -> LegLine | None:
    """``args`` (the command's name first) and ``env`` as `omg leg` takes them, or None when
    typer should answer."""
    try:
        return _parse(args, env)
    except (Unusual, ValueError):
        return None


def _parse(args: list[str], env: Mapping[str, str]) -> LegLine:
    if args[:1] != ["leg"] or any(name in env for name in TYPER_ENV):
        raise Unusual
    _, inputs, given = scan(args[1:], _VALUED, _FLAGS, positional=False)
    if FLAG in given:
        given[FLAG] = "true"  # given: typer does not read its variable then
    for key, (_, variable) in OPTIONS.items():
        if key not in given and variable is not None and env.get(variable):
            given[key] = env[variable]  # an empty variable is unset, to typer
    given.setdefault("runs_dir", str(DEFAULT_RUNS))
    read: dict[str, Any] = {k: _read(k, v) for k, v in given.items()}
    return LegLine(inputs=tuple(inputs), **read)


def _read(key: str, text: str) -> object:
    """An option's text as typer converts it; Unusual where typer might differ or refuse."""
    if key in PATHS:
        return path(text)
    if key == FLAG:
        if text.strip().lower() not in BOOLEAN:
            raise Unusual
        return BOOLEAN[text.strip().lower()]
    if key in WHOLES or key in AMOUNTS:
        number = int(plain(text, WHOLE)) if key in WHOLES else float(plain(text, AMOUNT))
        least, most = RANGES.get(key, (None, None))
        if (least is not None and number < least) or (most is not None and number > most):
            raise Unusual  # typer's refusal, in typer's words
        return number
    return text


def run(given: LegLine) -> None:
    """The job, under the one error handler; exits as the typer app would (an interrupt 130,
    a closed stdout 1)."""
    guarded(lambda: sys.exit(typer_ending(lambda: _job(given))), {})


def _job(given: LegLine) -> int:
    from omg.ci import job

    return leg(given, job.leg, job.wave)
