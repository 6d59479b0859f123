"""The executions a proxy serves: unguessable placeholders, ceilings in dollars and tokens
(given, or asked before each request), refusals recorded and why, answers settled and priced,
and a finished execution's record once its last answers settled."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import pytest

from omg.modelproxy.executions import KEPT, Ceiling, Executions, Grant
from omg.modelproxy.usage import Usage

ANSWER = Usage("messages", "claude-opus-5-5", {"input_tokens": 1000, "output_tokens": 200})


def book(
    ceiling: Ceiling = None,
    tokens: int | None = None,
    pricer: Callable[[Usage], float | None] = lambda u: 0.5,
) -> tuple[Executions, Grant]:
    ex = Executions()
    return ex, ex.register(
        "impl", "anthropic", "http://127.0.0.1:1/anthropic", pricer, ceiling, tokens
    )


def test_placeholders_are_random_and_never_shown() -> None:
    ex = Executions()
    grants = [ex.register(f"n{i}", "a", "u", lambda u: None) for i in range(50)]
    keys = {g.placeholder for g in grants}
    assert len(keys) == 50 and all(len(k) >= 40 for k in keys)
    assert all(g.placeholder not in repr(g) for g in grants)
    assert ex.find(grants[0].placeholder) is ex.of(grants[0])
    assert ex.find(grants[0].placeholder[:-1]) is None and ex.find("") is None


def test_an_execution_under_its_ceilings_may_ask() -> None:
    ex, grant = book(ceiling=1.0, tokens=5000)
    assert ex.check(ex.of(grant)) is None
    ex.begin(ex.of(grant))
    ex.settle(ex.of(grant), ANSWER, True)
    assert ex.check(ex.of(grant)) is None  # $0.50 of $1, 1,200 tokens of 5,000


@pytest.mark.parametrize(
    ("ceiling", "tokens", "answers", "why", "said"),
    [
        (1.0, None, 2, "budget", "has spent $1.0000 of the $1.0000 it may spend"),
        (0.0, None, 0, "budget", "has spent $0.0000 of the $0.0000"),
        (math.nan, None, 0, "budget", "of the nan it may spend"),
        (-1.0, None, 0, "budget", "of the $-1.0000"),
        (None, 2400, 2, "tokens", "has used 2400 tokens, its ceiling is 2400"),
        (lambda: 0.4, None, 1, "budget", "has spent $0.5000 of the $0.4000"),
    ],
)
def test_an_execution_at_a_ceiling_is_refused(
    ceiling: Ceiling, tokens: int | None, answers: int, why: str, said: str
) -> None:
    ex, grant = book(ceiling, tokens)
    run = ex.of(grant)
    for _ in range(answers):
        ex.begin(run)
        ex.settle(run, ANSWER, True)
    refusal = ex.check(run)
    assert refusal is not None and refusal["why"] == why and said in refusal["message"]
    record = ex.record(grant)
    assert record["refusals"] == [refusal] and record["budget_exceeded"]


def test_a_ceiling_asked_for_is_asked_before_every_request() -> None:
    room = iter([2.0, 2.0, 0.25])
    ex, grant = book(ceiling=lambda: next(room))
    run = ex.of(grant)
    assert ex.check(run) is None
    ex.begin(run)
    ex.settle(run, ANSWER, True)
    assert ex.check(run) is None
    refusal = ex.check(run)
    assert refusal is not None and refusal["why"] == "budget"


def test_a_ceiling_that_cannot_be_read_refuses() -> None:
    def broken() -> float:
        raise RuntimeError("book unreadable: /secret/path")

    ex, grant = book(ceiling=broken)
    refusal = ex.check(ex.of(grant))
    assert refusal is not None and refusal["why"] == "ceiling"
    assert "RuntimeError" in refusal["message"] and "/secret/path" not in refusal["message"]
    assert not ex.record(grant)["budget_exceeded"]


def test_a_finished_execution_is_refused_and_its_record_kept() -> None:
    ex, grant = book(ceiling=100.0)
    run = ex.of(grant)
    ex.begin(run)
    ex.settle(run, ANSWER, True)
    record = ex.finish(grant)
    assert record["finished"] and record["requests"] == 1 and record["cost_usd"] == 0.5
    refusal = ex.check(run)
    assert refusal is not None and refusal["why"] == "finished"
    assert not ex.record(grant)["budget_exceeded"]


@pytest.mark.parametrize(
    ("pricer", "usage", "billable", "cost", "unpriced"),
    [
        (lambda u: 0.25, ANSWER, True, 0.25, 0),
        (lambda u: None, ANSWER, True, 0.0, 1),  # no price: its tokens still count
        (lambda u: 1 / 0, ANSWER, True, 0.0, 1),  # a pricer that fails prices nothing
        (lambda u: math.inf, ANSWER, True, 0.0, 1),
        (lambda u: -1.0, ANSWER, True, 0.0, 1),
        (lambda u: 0.25, None, True, 0.0, 1),  # a billable answer without usage
        (lambda u: 0.25, None, False, 0.0, 0),  # a 429, count_tokens: nothing to price
    ],
)
def test_an_answer_is_settled_priced_or_counted_unpriced(
    pricer: Callable[[Usage], float],
    usage: Usage | None,
    billable: bool,
    cost: float,
    unpriced: int,
) -> None:
    ex, grant = book(pricer=pricer)
    ex.begin(ex.of(grant))
    ex.settle(ex.of(grant), usage, billable)
    record = ex.record(grant)
    assert (record["requests"], record["cost_usd"], record["unpriced"]) == (1, cost, unpriced)
    assert record["usage"] == (dict(usage.counts) if usage else {})


def test_usage_and_models_add_up_over_answers() -> None:
    ex, grant = book()
    run = ex.of(grant)
    for model in ("claude-opus-5-5", "claude-haiku-5-5", "claude-opus-5-5"):
        ex.begin(run)
        ex.settle(run, Usage("messages", model, {"input_tokens": 10, "output_tokens": 1}), True)
    record = ex.record(grant)
    assert record["models"] == ["claude-opus-5-5", "claude-haiku-5-5"]
    assert record["usage"] == {"input_tokens": 30, "output_tokens": 3}
    assert record["cost_usd"] == 1.5


def test_refusals_are_all_counted_and_the_first_kept() -> None:
    ex, grant = book()
    run = ex.of(grant)
    for i in range(KEPT + 5):
        ex.refuse(run, "path", f"omg: no {i}")
    record = ex.record(grant)
    assert record["refused"] == KEPT + 5 and len(record["refusals"]) == KEPT
    assert record["refusals"][0]["message"] == "omg: no 0"
    ex.refuse(None, "unknown", "omg: who?")
    assert ex.strays == {"unknown": 1}


def test_finish_waits_for_the_answers_still_passing() -> None:
    ex, grant = book()
    run = ex.of(grant)
    ex.begin(run)
    late = threading.Timer(0.2, lambda: ex.settle(run, ANSWER, True))
    late.start()
    record = ex.finish(grant)
    assert record["requests"] == 1 and record["usage"]["input_tokens"] == 1000
    assert ex.finish(grant, wait_s=0)["finished"]


def test_an_unknown_grant_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="'ghost'"):
        Executions().record(Grant("ghost", "a", "u", "omg-x"))
