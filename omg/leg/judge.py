"""Success checks: judging one attempt — exit_zero → result_matches → output_equals → verify —
with provenance."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from omg.graph.model import Node
from omg.kinds import Cause, Provenance
from omg.leg import fields
from omg.runners.base import Invocation, Output, Runner
from omg.runners.matcher import MATCH_TIMEOUT_S, Search, search
from omg.runners.process import Spawner, tail

if TYPE_CHECKING:
    from omg.graph.placeholders import ShellText


@dataclass(frozen=True)
class Judgment:
    """The verdict on one attempt."""

    passed: bool
    cause: Cause | None = None
    judged: bool = False  # a check rendered a verdict (vs. the attempt never completing)
    provenance: Provenance | None = None
    detail: str = ""
    payload: str = ""  # what a feedback arc hands back: verify evidence, else the reply


def judge(
    node: Node,
    outcome: Output,
    *,
    verify_command: ShellText | None,
    verify_cwd: Path,
    env: Mapping[str, str],
    spawn: Spawner,
    shell: Runner,
    match_timeout_s: float = MATCH_TIMEOUT_S,
) -> Judgment:
    """Judge ``outcome`` against ``node.success_check`` (verify command already rendered, run
    by ``shell``, the shell runner the leg hands in).

    A pattern is searched in a child process, so one that backtracks without end fails the
    attempt as ``match_timeout`` after ``match_timeout_s`` instead of hanging the leg.
    """
    if outcome.error is not None:
        return Judgment(False, outcome.error, False, detail=outcome.detail, payload=outcome.result)
    sc = node.success_check
    nid = node.id
    said = fields.findings(node, outcome)  # what a feedback arc hands back of the reply
    if sc.requires_exit_zero and outcome.exit_code != 0:
        detail = f'node "{nid}" failed success_check exit_zero: exit code {outcome.exit_code}'
        if outcome.result.strip():
            detail += f": {tail(outcome.result)}"
        return Judgment(False, "nonzero_exit", True, detail=detail, payload=said)
    if sc.result_matches is not None:
        found = search(sc.result_matches, outcome.result, spawn, verify_cwd, match_timeout_s)
        if found.found is None:
            return _unjudged(node, "result_matches", sc.result_matches, outcome.result, found)
        if not found.found:
            detail = (
                f'node "{nid}" failed success_check result_matches: result did not match '
                f"/{sc.result_matches}/: {tail(outcome.result, 120)}"
            )
            return Judgment(False, "result_mismatch", True, detail=detail, payload=said)
    if sc.output_equals:
        wrong = fields.unequal(sc.output_equals, outcome.structured)
        if wrong:
            detail = f'node "{nid}" failed success_check output_equals: {wrong}'
            return Judgment(False, "result_mismatch", True, detail=detail, payload=said)
    if sc.verify is not None and verify_command is not None:
        return _verify(node, said, verify_command, verify_cwd, env, spawn, shell, match_timeout_s)
    claimed = sc.result_matches is not None or bool(sc.output_equals)
    provenance: Provenance = "self-reported" if claimed else "exit-only"
    if outcome.denials and provenance == "exit-only":
        return Judgment(
            False,
            "run_error",
            False,
            detail=(
                f'node "{nid}": {node.runtime} was refused {", ".join(outcome.denials)}; an '
                "exit code alone cannot pass an agent that was denied tools — grant them in "
                "allowed_tools, or add a result_matches or verify check that judges the work"
            ),
        )
    return Judgment(True, provenance=provenance)


def _unjudged(node: Node, check: str, pattern: str, text: str, found: Search) -> Judgment:
    """A pattern that could not be searched to the end: the check's defect, not the work's."""
    why = (
        " — the pattern backtracks catastrophically (a repeated group that itself repeats, "
        "like (a+)+, or several .* in a row); rewrite it"
        if found.timed_out
        else ""
    )
    return Judgment(
        False,
        "match_timeout" if found.timed_out else "run_error",
        False,
        detail=(
            f'node "{node.id}" could not judge success_check {check}: the search for '
            f"/{pattern}/ over {len(text):,} characters {found.error}{why}"
        ),
    )


def _verify(
    node: Node,
    said: str,
    command: ShellText,
    cwd: Path,
    env: Mapping[str, str],
    spawn: Spawner,
    shell: Runner,
    match_timeout_s: float,
) -> Judgment:
    """Run the verify command through the shell runner and judge its exit and output."""
    v = node.success_check.verify
    assert v is not None
    inv = Invocation(
        node=node,
        text=command.script,
        cwd=cwd,
        env={**env, **command.env},
        timeout_s=v.timeout_s,
    )
    res = shell.run(inv, spawn)
    head = f'node "{node.id}" failed success_check verify: `{v.command}`'
    if res.error == "timeout":
        return Judgment(False, "verify_failed", False, detail=f"{head} timed out after {v.timeout}")
    if res.error is not None and res.exit_code != v.expect_exit:
        # could not start, or an environment failure (exit 126/127, "command not found")
        return Judgment(False, "run_error", False, detail=f"{head}: {res.detail}")
    evidence = _evidence(said, v.command, res.exit_code, v.expect_exit, res.result)
    if res.exit_code != v.expect_exit:
        return Judgment(
            False,
            "verify_failed",
            True,
            detail=(
                f"{head} exited {res.exit_code}, want {v.expect_exit}; output: {tail(res.result)}"
            ),
            payload=evidence,
        )
    if v.output_matches is None:
        return Judgment(True, provenance="verified")
    found = search(v.output_matches, res.result, spawn, cwd, match_timeout_s)
    if found.found is None:
        return _unjudged(node, "verify.output_matches", v.output_matches, res.result, found)
    if not found.found:
        return Judgment(
            False,
            "verify_failed",
            True,
            detail=f"{head} output did not match /{v.output_matches}/; output: {tail(res.result)}",
            payload=evidence,
        )
    return Judgment(True, provenance="verified")


EVIDENCE_TAIL = 4000


def _evidence(reply: str, command: str, code: int | None, want: int, output: str) -> str:
    """A failing verify's feedback payload: the reply first (the reviewer's own findings), then
    the verify evidence, fenced so the re-run can tell the two apart."""
    block = (
        "--- omg: verify evidence ---\n"
        f"command: {command}\n"
        f"exit code: {code} (expected {want})\n"
        f"output (last {EVIDENCE_TAIL} characters):\n{tail(output, EVIDENCE_TAIL)}\n"
        "--- end of verify evidence ---"
    )
    return f"{reply.rstrip()}\n\n{block}" if reply.strip() else block
