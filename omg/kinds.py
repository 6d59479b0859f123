"""The vocabulary: every closed set omg speaks, each spelled once as a Literal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

#: A warning's words handed down to whoever tells a person (the command line, the job's log).
Warn = Callable[[str], None]

#: Why an attempt failed; the closed set `retry.on` names.
Cause = Literal[
    "nonzero_exit",
    "run_error",
    "timeout",
    "idle_timeout",
    "output_error",
    "budget_exceeded",
    "verify_failed",
    "result_mismatch",
    "match_timeout",
    "turn_limit",
    "no_progress",
]
#: What a PASS rests on.
Provenance = Literal["verified", "self-reported", "exit-only", "approved"]
#: A node record's verdict: passed, failed, or "" (pending, or a loop's marker mid-round).
Verdict = Literal["PASS", "FAIL", ""]
#: How a leg (and so the run, for now) ended.
Outcome = Literal["passed", "failed", "paused"]
#: How a GitHub Actions job of omg ended: clean (a leg passed, paused or continues, or there
#: was nothing to do) or failed (the run failed, or a waiting run could not be continued).
JobOutcome = Literal["clean", "failed"]
#: Why a leg ended where it did (`run_finished.reason`).
StopReason = Literal["gate", "leg_budget", "failed", "unfinished", "limit", "spend_cap"]
#: What a `node_retried` event stands for.
RetryReason = Literal["retry", "correction", "feedback", "exhausted", "leg_budget", "limit"]
#: A limit of the model's provider that pauses a run until it resets: a subscription's usage
#: window (``session``: "You've hit your session limit · resets 3pm") or an API rate limit
#: that outlasted the CLI's own retries (``rate``).
LimitKind = Literal["session", "rate"]
#: A spend cap beyond one run: over all runs of one pull request, or of the repository in a
#: UTC day.
CapScope = Literal["pull_request", "day"]
#: What a gate decision rules (the recorded decision itself is `leg.decisions.Decision`).
Ruling = Literal["approve", "reject"]

CAUSES: tuple[Cause, ...] = get_args(Cause)
#: Causes that are judgments of the work (a check said no), so a feedback loop may fire on them.
JUDGMENT_CAUSES: frozenset[Cause] = frozenset({"verify_failed", "result_mismatch", "nonzero_exit"})
#: The implicit gate an exhausted loop escalates to is ``<declarer>.exhausted``.
EXHAUSTED_GATE_SUFFIX = ".exhausted"
