"""A structured reply: an agent node's reply validated against its ``output_schema`` before any
check judges it, and the one correction turn — the same session asked again, naming what was
wrong — when it does not conform; the correction is its own ledger row, priced."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from omg import replyschema, replytext
from omg.graph.model import Node
from omg.runners.base import Invocation, Output
from omg.runners.replycheck import NESTED, check_reply
from omg.spend import Spend

if TYPE_CHECKING:
    from pathlib import Path

    from omg.runners.process import Spawner
    from omg.state.recorder import Recorder

#: The most characters of a structured reply an event records (the artifact holds it whole).
RECORDED_LIMIT = 16 * 1024


def check(node: Node, out: Output, spawn: Spawner, cwd: Path) -> tuple[Any, list[str], str]:
    """The reply's value and [] — or what is wrong with it, path by path; third, why the
    node's output_schema could not be applied to the reply at all ('' when it could). A schema
    whose check is not linear in the reply is applied in a child under a time limit."""
    schema = node.schema
    assert schema is not None
    text = out.structured if out.structured is not None else out.result
    value, why = replytext.parse_reply(text)
    if why:
        return None, [why], ""
    if not replyschema.linear(schema):
        got = check_reply(schema, value, spawn, cwd)
        return value, list(got.errors), got.unusable
    try:
        return value, replyschema.errors(schema, value), ""
    except RecursionError:
        return value, [], NESTED


def conform(
    recorder: Recorder,
    node: Node,
    round_: int,
    inv: Invocation,
    out: Output,
    again: Callable[[Invocation], Output],
    spawn: Spawner,
) -> tuple[Output, Spend]:
    """``out`` as a structured reply (its text the indented JSON, ``structured`` the value), or
    an ``output_error`` naming what is wrong after one correction turn (``again`` runs it);
    and the spend of the reply that needed correcting (recorded here, in its own event)."""
    if out.error is not None or out.limit is not None:
        return out, Spend()
    value, problems, unusable = check(node, out, spawn, inv.cwd)
    if unusable:  # no correction turn: the reply is not what is wrong
        return _unusable(out, unusable), Spend()
    if not problems:
        return _conformed(out, value), Spend()
    if not out.session_id:
        return _malformed(out, problems, corrected=False), Spend()
    recorder.emit(
        "node_retried",
        node_id=node.id,
        reason="correction",
        round=round_ or None,
        cause="output_error",
        detail=(
            "the reply does not match output_schema: "
            + "; ".join(problems)
            + " — one correction turn in the same session"
        ),
        cost_usd=out.spend.cost_usd,
        cost_unknown=out.spend.cost_unknown or None,
        cost_anomaly=out.spend.anomaly,
        usage=dict(out.spend.usage) or None,
        session_id=out.session_id,
        duration_s=round(out.duration_s, 3),
        cli_version=out.tool_version or None,
    )
    turn = replace(
        inv,
        text=replyschema.correction(problems),
        session_id=None,
        resume_session=out.session_id,
        fork=False,
        resume_cost_usd=out.spend.session_cost_usd or 0.0,
    )
    fixed = again(turn)
    if fixed.error is not None or fixed.limit is not None:
        return fixed, out.spend
    value, problems, unusable = check(node, fixed, spawn, inv.cwd)
    if unusable:
        return _unusable(fixed, unusable), out.spend
    if problems:
        return _malformed(fixed, problems, corrected=True), out.spend
    return _conformed(fixed, value), out.spend


def _conformed(out: Output, value: Any) -> Output:
    return replace(out, result=replyschema.pretty(value), structured=json.dumps(value))


def _malformed(out: Output, problems: list[str], *, corrected: bool) -> Output:
    after = "after one correction turn" if corrected else "(no session to correct it in)"
    detail = (
        f"the reply does not match output_schema {after}: {'; '.join(problems)} — the prompt may "
        "need to ask for the structure plainly, or the schema may be more than the model gives"
    )
    return replace(out, error="output_error", detail=detail, structured=None)


def _unusable(out: Output, why: str) -> Output:
    detail = (
        f"the node's output_schema could not be applied to its reply ({why}); a correction turn "
        "would not mend that: simplify the schema (a pattern that backtracks, references that "
        "go on), or ask in the prompt for a flatter reply"
    )
    return replace(out, error="output_error", detail=detail, structured=None)


def recorded(structured: str | None) -> Any:
    """What an event records of a structured reply: the value, unless it is over the limit."""
    if structured is None or len(structured) > RECORDED_LIMIT:
        return None
    return json.loads(structured)
