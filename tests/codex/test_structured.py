"""Structured replies with the real codex CLI: --output-schema reaches the API as a JSON
Schema format, the final message is validated, and a malformed one is corrected once by
resuming the same thread (its own ledger row)."""

from __future__ import annotations

import json
from pathlib import Path

from kit import run_graph

from .conftest import runners, script

GRAPH = """\
name: g
nodes:
  - id: a
    runtime: codex
    prompt: judge it
    output_schema:
      type: object
      additionalProperties: false
      required: [verdict]
      properties: {verdict: {enum: [ship, fix]}}
    success_check: {exit_zero: true, output_equals: {verdict: ship}}
"""


def test_a_codex_reply_is_validated_and_a_malformed_one_corrected_in_its_thread(
    stub, env, repo: Path, codex_bin: str
) -> None:
    script(
        stub,
        {"name": "prose", "when": {"correction": False}, "reply": "I'd SHIP IT"},
        {"name": "fixed", "when": {"correction": True}, "structured": {"verdict": "ship"}},
    )
    ran = run_graph(repo, GRAPH, parent_env=env(), runners=runners(codex_bin))
    assert ran.outcome == "passed", ran.events()
    assert json.loads(ran.artifact("a")) == {"verdict": "ship"}
    assert [s.schema for s in stub.seen] == [True, True]  # --output-schema, both turns
    assert [s.request.correction for s in stub.seen] == [False, True]
    evs = ran.events()
    fixed = [e for e in evs if e["event"] == "node_retried" and e["reason"] == "correction"]
    passed = [e for e in evs if e["event"] == "node_passed"]
    assert len(fixed) == 1 and fixed[0]["usage"]["output_tokens"] > 0
    assert passed[0]["session_id"] == fixed[0]["session_id"]  # `codex exec resume` its thread
    assert passed[0]["output"] == {"verdict": "ship"}


def test_a_codex_reply_that_stays_malformed_fails_as_output_error(
    stub, env, repo: Path, codex_bin: str
) -> None:
    script(stub, {"name": "bad json", "structured": {"verdict": "maybe"}})
    ran = run_graph(repo, GRAPH, parent_env=env(), runners=runners(codex_bin))
    assert ran.outcome == "failed"
    failed = next(e for e in ran.events() if e["event"] == "node_failed")
    assert failed["cause"] == "output_error"
    assert "$.verdict: 'maybe' is not one of ['ship', 'fix']" in failed["detail"]
