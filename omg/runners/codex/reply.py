"""What a codex run means: its folded event stream turned into an Output, each way it can end
mapped to the closed cause set with a hint saying what to do."""

from __future__ import annotations

from dataclasses import replace

from omg.kinds import Cause
from omg.runners.base import Output
from omg.runners.codex.events import STATUS, Stream
from omg.runners.limits import RATE_STATUS
from omg.runners.limits import classify as limit_of
from omg.runners.process import ProcResult, tail
from omg.spend import Spend

BIN_ENV = "OMG_CODEX_BIN"
INSTALL_HINT = (
    "install it with `npm install -g @openai/codex`, or set OMG_CODEX_BIN to the path of the "
    "codex binary (the action's codex-version input installs it)"
)
LOGIN_HINT = "set OPENAI_API_KEY (or CODEX_API_KEY) for the runner to a key the API accepts"
SESSION_HINT = (
    "the thread to resume is not on this machine: its rollout travels with the run (restored "
    "before a resume, unless it was over the size cap); re-run the parent node, or use "
    "handoff: artifact"
)


def classify(said: str, statuses: list[int]) -> tuple[Cause, str]:
    """The cause and the sentence (with its fix) for codex's failure message ``said``."""
    low = said.lower()
    named = STATUS.search(said)
    last = int(named.group(1)) if named else (statuses[-1] if statuses else None)
    if "missing environment variable" in low or last in (401, 403):
        return "run_error", f"codex could not authenticate: {said}; {LOGIN_HINT}"
    if "no rollout found" in low or "thread/resume failed" in low:
        return "run_error", f"codex could not resume the parent's thread: {said}; {SESSION_HINT}"
    if "context window" in low or "context_length" in low:
        return "run_error", (
            f"the model's context window is full: {said}; give the node a smaller task or "
            "prompt, or use handoff: artifact instead of resuming a long thread"
        )
    if last == 429 or "rate limit" in low or "usage limit" in low:
        return "run_error", (
            f"the API rate-limited codex (HTTP 429): {said}; lower the graph's concurrency, "
            "or retry the node later (retry: {max: 2, on: [run_error], backoff: …})"
        )
    if (last is not None and last >= 500) or "high demand" in low:
        return "run_error", (
            f"the API failed (server error): {said}; an outage is not a verdict on the work — "
            "retry later (https://status.openai.com)"
        )
    return (
        "run_error",
        f"codex reported an error: {said}; the CLI's or its API's failure, not a verdict",
    )


def from_stream(s: Stream, res: ProcResult, spend: Spend) -> Output:
    """An Output for a run that ended on its own (not stopped by omg), with the API retries
    codex reported ("Reconnecting… n/N") however it ended, as claude's are counted."""
    return replace(_ended(s, res, spend), api_retries=s.reconnects)


def _ended(s: Stream, res: ProcResult, spend: Spend) -> Output:
    sid = s.thread_id
    if s.failure or (res.exit_code not in (0, None) and not s.completed):
        said = s.failure or (s.errors[-1] if s.errors else "") or stderr_tail(res) or "no message"
        named = STATUS.search(said)
        seen = s.statuses()
        status = int(named.group(1)) if named else (seen[-1] if seen else None)
        hit = limit_of(said, status)
        if hit is not None:  # a usage or rate limit of the provider: the run pauses
            detail = f"codex stopped at {hit.describe()}; the run pauses until it resets"
            return Output(
                res.exit_code, s.reply, sid, spend, "run_error", detail, res.duration_s, limit=hit
            )
        cause, detail = classify(_clip(said), s.statuses())
        if s.reconnects:
            detail += f" (after {s.reconnects} reconnects)"
        return Output(res.exit_code, s.reply, sid, spend, cause, detail, res.duration_s)
    if not s.completed:
        what = "codex ended without finishing its turn"
        return Output(
            res.exit_code,
            s.reply,
            sid,
            spend,
            "output_error",
            f"{what}: {stderr_tail(res)}",
            res.duration_s,
        )
    if not s.reply.strip():
        said = "no agent message" if not s.messages else "an empty agent message"
        return Output(
            res.exit_code, "", sid, spend, "output_error",
            f"the agent exited without answering: codex finished its turn with {said}; the "
            "node's prompt may need to ask for an answer, or the model returned nothing",
            res.duration_s,
        )  # fmt: skip
    return Output(res.exit_code, s.reply, sid, spend, duration_s=res.duration_s)


def stopped(res: ProcResult, s: Stream, timeout_s: float, idle: str | None) -> Output:
    """codex was stopped: its node timeout, the watchdog (``idle``), or refused credentials."""
    if res.gave_up is not None:
        cause: Cause = "run_error"
        what = (
            f"codex could not authenticate: {res.gave_up}; omg stopped it rather than wait out "
            f"the CLI's reconnects; {LOGIN_HINT}"
        )
    elif idle is not None:
        cause = "idle_timeout"
        what = (
            f"stuck: no output for {idle} (idle_timeout); codex and every process it started "
            "were stopped"
        )
    else:
        cause = "run_error" if s.reconnects else "timeout"
        what = (
            f"timed out after {timeout_s:g}s (node timeout); codex and every process it "
            "started were stopped"
        )
        if s.reconnects:
            what += f"; the API was failing meanwhile: {s.reconnects} reconnects"
    spend = Spend(cost_unknown=True, usage=s.usage)
    statuses = set(s.statuses())
    limited = idle is None and res.gave_up is None and statuses == {RATE_STATUS}
    hit = limit_of(f"{s.reconnects} reconnects, each HTTP 429", RATE_STATUS) if limited else None
    if hit is not None:  # rate-limited the whole time: a limit, not a verdict or an outage
        what += "; the run pauses for the rate limit"
    return Output(
        None, s.reply, s.thread_id, spend, cause, what, res.duration_s,
        api_retries=s.reconnects, limit=hit,
    )  # fmt: skip


def stderr_tail(res: ProcResult) -> str:
    """The end of what codex said on stderr, for a detail."""
    return tail(res.stderr, 500, mark="…(truncated) ")


def _clip(text: str, limit: int = 500) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " …(truncated)"
