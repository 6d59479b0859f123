"""Structured replies with the real claude CLI: --json-schema, the StructuredOutput tool the
stub model calls, one correction turn in the same session (its own ledger row, priced), and
a verdict read from a field — prose that says SHIP IT can no longer pass."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from kit import omg_in_process

from .conftest import ROOT, Env

GRAPH = """\
name: s
nodes:
  - id: review
    prompt: Review the change.
    output_schema:
      type: object
      additionalProperties: false
      required: [verdict, findings]
      properties:
        verdict: {enum: [ship, fix]}
        findings: {type: array, items: {type: string}}
    success_check:
      exit_zero: true
      output_equals: {verdict: ship}
  - id: after
    depends_on: [review]
    run: printf '%s|%s' {{ outputs.review.verdict }} {{ outputs.review.findings }}
"""


def _run(repo: Path, env: Env, script: str, rid: str) -> tuple[int, str, Path]:
    (repo / "g.yaml").write_text(GRAPH)
    (repo / "r.yaml").write_text(textwrap.dedent(script))
    done = omg_in_process(
        "run", "g.yaml", "--run-id", rid, "--rehearse", "r.yaml", cwd=repo, env=env()
    )
    return done.returncode, done.stdout + done.stderr, repo / ".omg" / "runs" / rid


def _events(run: Path) -> list[dict]:
    return [json.loads(x) for x in (run / "events.jsonl").read_text().splitlines()]


def test_a_structured_reply_passes_on_its_field_and_feeds_a_placeholder(
    repo: Path, env: Env
) -> None:
    code, said, run = _run(
        repo, env, """\
        rules:
          - name: ships
            when: {node: review}
            structured: {verdict: ship, findings: []}
        """, "ok",
    )  # fmt: skip
    assert code == 0, said
    state = json.loads((run / "state.json").read_text())
    assert state["nodes"]["review"]["output"] == {"verdict": "ship", "findings": []}
    assert state["nodes"]["review"]["provenance"] == "self-reported"
    assert (run / "artifacts" / "after.out").read_text() == "ship|[]"
    assert json.loads((run / "artifacts" / "review.out").read_text())["verdict"] == "ship"


def test_prose_that_says_ship_it_is_corrected_once_and_the_correction_is_priced(
    repo: Path, env: Env
) -> None:
    code, said, run = _run(
        repo, env, """\
        rules:
          - name: prose
            when: {node: review, correction: false}
            reply: "I'd SHIP IT once the tests pass."
          - name: corrected
            when: {node: review, correction: true}
            structured: {verdict: fix, findings: [tests are missing]}
        """, "fix",
    )  # fmt: skip
    assert code != 0, said
    evs = _events(run)
    fixed = [e for e in evs if e["event"] == "node_retried" and e.get("reason") == "correction"]
    assert len(fixed) == 1 and fixed[0]["cost_usd"] > 0
    assert "the reply is not JSON" in fixed[0]["detail"]
    failed = [e for e in evs if e["event"] == "node_failed"]
    assert failed[0]["cause"] == "result_mismatch" and failed[0]["cost_usd"] > 0
    assert 'verdict is "fix", want "ship"' in failed[0]["detail"]
    # the same session continued: the correction resumed the first reply's session
    assert failed[0]["session_id"] == fixed[0]["session_id"]
    shown = omg_in_process("status", "fix", cwd=repo, env=env())
    rows = [line for line in shown.stdout.splitlines() if line.startswith("review")]
    assert [r.split()[2] for r in rows] == ["MALFORMED", "FAIL"], shown.stdout
    assert "correction turn" in rows[1]
    node = omg_in_process("status", "fix", "--node", "review", cwd=repo, env=env())
    assert '"verdict": "fix"' in node.stdout and "malformed, corrected" in node.stdout


def test_a_reply_that_stays_malformed_fails_as_output_error(repo: Path, env: Env) -> None:
    code, said, run = _run(
        repo, env, """\
        rules:
          - name: prose, always
            when: {node: review}
            reply: "SHIP IT"
        """, "bad",
    )  # fmt: skip
    assert code != 0, said
    failed = [e for e in _events(run) if e["event"] == "node_failed"]
    assert failed[0]["cause"] == "output_error"
    assert "after one correction turn" in failed[0]["detail"]
    assert "output" not in json.loads((run / "state.json").read_text())["nodes"]["review"]


def test_the_shipped_review_loop_stays_malformed_rehearsal_fails_review(
    repo: Path, env: Env
) -> None:
    (repo / "Makefile").write_text("test:\n\tsh hello.sh\n")
    done = omg_in_process(
        "run", str(ROOT / "graphs" / "review-loop.yaml"), "-i", "task=t", "--run-id", "m",
        "--rehearse", str(ROOT / "graphs" / "rehearsals" / "review-loop-malformed.yaml"),
        cwd=repo, env=env(),
    )  # fmt: skip
    assert done.returncode != 0, done.stdout + done.stderr
    state = json.loads((repo / ".omg" / "runs" / "m" / "state.json").read_text())
    assert state["nodes"]["change/review"]["cause"] == "output_error"
