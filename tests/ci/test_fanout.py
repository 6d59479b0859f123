"""A fan-out wave's jobs, planned, as a table: which job of the run this is, and when the fold
dispatches no next wave."""

from __future__ import annotations

from typing import Any, cast

import pytest

from omg.ci import fanout
from omg.ci.actions import Fold, RunEntry
from omg.errors import StateError, UsageError
from omg.leg.start import LegEnd

from .table import GRAPH, Table, args, leg, state


def test_a_matrix_job_runs_its_entry_and_the_job_after_folds() -> None:
    on_remote = {"r1": state("r1")}
    assert fanout.plan("r1", Table(args=args(node="a"), runs=on_remote)) == RunEntry("r1", "a")
    assert fanout.plan("r1", Table(args=args(fold=True), runs=on_remote)) == Fold("r1")


@pytest.mark.parametrize(
    ("rid", "error", "said"),
    [("", UsageError, "needs the run"), ("r1", StateError, "the plan job starts it")],
    ids=["no run named", "a run the remote lacks"],
)
def test_a_wave_job_without_its_run_is_refused(rid: str, error: type[Exception], said: str) -> None:
    with pytest.raises(error, match=said):
        fanout.plan(rid, Table(args=args(fold=True)))


def _end(folded: list[str]) -> LegEnd:
    after = state("r1", legs=[leg("paused", fanout={"folded": folded})])
    return LegEnd("r1", None, after, GRAPH)


def _before(folded: list[str] | None) -> Any:
    legs = [] if folded is None else [leg("paused", fanout={"folded": folded})]
    return state("r1", legs=legs)


@pytest.mark.parametrize(
    ("now", "before", "stuck"),
    [
        ([], [], True),  # two waves in a row published nothing
        ([], ["a"], False),
        (["a"], [], False),
        ([], None, False),  # the first wave: nothing to compare with
    ],
)
def test_the_fold_dispatches_no_next_wave_after_two_that_published_nothing(
    now: list[str], before: list[str] | None, stuck: bool
) -> None:
    said = fanout.stuck(_end(now), cast(Any, _before(before)))
    assert bool(said) is stuck and (not stuck or "two waves in a row" in said)
    assert fanout.stuck(None, _before(before)) == ""
