"""What a claude reply means: its result envelope, the API retries it reported, and the
closed cause (with a hint saying what to do) each way a session can end maps to."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from omg.kinds import Cause
from omg.runners.base import Output
from omg.runners.claude.stream import Retries
from omg.runners.limits import RATE_STATUS, classify
from omg.runners.process import ProcResult, tail
from omg.spend import Spend

#: Parent-environment variable naming the claude binary (a path, or a name looked up on PATH).
BIN_ENV = "OMG_CLAUDE_BIN"
INSTALL_HINT = (
    "install it with `npm install -g @anthropic-ai/claude-code`, "
    f"or set {BIN_ENV} to the path of the claude binary"
)
LOGIN_HINT = (
    "log in with `claude /login`, "
    "or set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN for the runner"
)
BUDGET_SUBTYPE = "error_max_budget_usd"
#: claude 2.1.x at --max-turns: ``subtype: error_max_turns``, ``terminal_reason: max_turns``,
#: ``is_error: true``, no ``result``, ``errors: ["Reached maximum number of turns (N)"]``.
TURNS_SUBTYPE = "error_max_turns"
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
STDERR_TAIL = 500
STDOUT_HEAD = 200
#: Words that mark an error reply as an authentication problem (the login hint comes first).
#: The statuses as words, so a session id or a count that contains 401 does not count.
_AUTH_MARKERS = re.compile(
    r"not logged in|/login|api key|oauth|authentication|unauthorized|\b40[13]\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Envelope:
    """The fields omg reads from claude's ``--output-format json`` reply."""

    result: str
    session_id: str | None
    cost_usd: float | None
    usage: dict[str, int]
    is_error: bool
    subtype: str | None
    errors: tuple[str, ...]
    terminal_reason: str | None = None  # completed, api_error, max_turns, budget_exhausted…
    api_error_status: int | None = None  # the HTTP status of a failed API call
    denials: tuple[str, ...] = ()  # permission_denials, as "Tool(input)" one-liners
    #: ``structured_output`` as JSON text: what the StructuredOutput tool was given
    #: (``--json-schema``); None when the session ended without calling it
    structured: str | None = None

    @property
    def failure_cause(self) -> str:
        """What went wrong, in claude's words: its ``errors`` list, else the reply text."""
        if self.errors:
            return " / ".join(self.errors)
        return self.result.strip()


#: What to do when the session a handoff resumes is not where claude looks.
SESSION_HINT = (
    "the session to resume is not on this machine: its transcript travels with the run "
    "(restored before --resume, unless it was over the size cap); re-run the parent node, "
    "or use handoff: artifact"
)


def auth_refused(res: ProcResult, started: str | None, retries: Retries) -> Output:
    """claude was stopped by ``AuthRetries``: an authentication failure, said at once."""
    return _unanswered(
        res,
        started,
        "run_error",
        f"claude could not authenticate: {res.gave_up}; omg stopped it rather than "
        f"wait out the CLI's retries; {LOGIN_HINT}",
        stopped=True,
        retries=retries,
    )


def stopped(
    res: ProcResult, started: str | None, retries: Retries, timeout_s: float, idle: str | None
) -> Output:
    """claude was stopped for its node timeout, or (``idle`` names the period) as stuck."""
    if idle is not None:
        what = (
            f"stuck: no output and no transcript growth for {idle} (idle_timeout); claude and "
            "every process it started were stopped"
        )
    else:
        what = (
            f"timed out after {timeout_s:g}s (node timeout); claude and every process it "
            "started were stopped"
        )
    if retries:
        what += f"; the API was failing meanwhile: {retries.describe()}"
    limited = idle is None and bool(retries) and set(retries.statuses) == {RATE_STATUS}
    if limited:  # rate-limited the whole time: a limit, not a verdict or an outage
        what += "; the run pauses for the rate limit"
    out = _unanswered(
        res,
        started,
        "idle_timeout" if idle is not None else ("run_error" if retries else "timeout"),
        f"{what}; cost unknown (stopped before reporting)",
        stopped=True,
        retries=retries,
    )
    if limited:
        out = replace(out, limit=classify(retries.describe(), RATE_STATUS))
    return out


def refused(res: ProcResult, started: str | None) -> Output:
    """claude exited non-zero with only stderr: it refused its arguments or environment."""
    said = _tail(res.stderr)
    low = said.lower()
    hint = "check the node's agent, model, session and permission settings against `claude --help`"
    if "root" in low and ("dangerously-skip-permissions" in low or "bypass" in low):
        hint = (
            "claude refuses bypassPermissions as root (common in CI containers): run the job as "
            "a non-root user; in a throwaway container or VM only, give the node env: "
            "{IS_SANDBOX: '1'} (the CLI's way out for sandboxes); or use permission_mode "
            "acceptEdits / dontAsk with allowed_tools"
        )
    elif "no conversation found" in low:
        hint = SESSION_HINT
    elif "not found" in low and "agent" in low:
        hint = "define the agent under .claude/agents/ in the repository, or fix the node's agent:"
    return _unanswered(
        res,
        started,
        "run_error",
        f"claude refused to start (exit {res.exit_code}): {said}; {hint}",
    )


def parse_envelope(stdout: str) -> Envelope | None:
    """claude's reply envelope from its stdout, or None when there is none.

    The whole (trimmed) stdout is tried first; failing that, the last line that is a JSON
    object with ``"type": "result"`` or a ``result`` key. A JSON array (``--verbose`` output)
    yields its last result message.
    """
    text = stdout.strip()
    if not text:
        return None
    try:
        whole: Any = json.loads(text)
    except ValueError:
        whole = None
    candidate = _pick(whole)
    if candidate is None:
        for line in reversed(text.splitlines()):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj: Any = json.loads(line)
            except ValueError:
                continue
            candidate = _pick(obj)
            if candidate is not None:
                break
    return None if candidate is None else _envelope(candidate)


def _pick(obj: Any) -> Mapping[str, object] | None:
    if isinstance(obj, list):
        for item in reversed(obj):
            picked = _pick(item) if isinstance(item, dict) else None
            if picked is not None:
                return picked
        return None
    if isinstance(obj, dict) and (obj.get("type") == "result" or "result" in obj):
        return obj
    return None


def _envelope(obj: Mapping[str, object]) -> Envelope:
    result = obj.get("result")
    sid = obj.get("session_id")
    cost = obj.get("total_cost_usd")
    usage_raw = obj.get("usage")
    usage: dict[str, int] = {}
    if isinstance(usage_raw, Mapping):
        for key in USAGE_KEYS:
            value = usage_raw.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                usage[key] = int(value)
    errors_raw = obj.get("errors")
    errors: tuple[str, ...] = ()
    if isinstance(errors_raw, list):
        errors = tuple(_error_text(e) for e in errors_raw if e not in (None, ""))
    elif isinstance(errors_raw, str) and errors_raw:
        errors = (errors_raw,)
    subtype = obj.get("subtype")
    reason = obj.get("terminal_reason")
    status = obj.get("api_error_status")
    denials_raw = obj.get("permission_denials")
    denials = tuple(_denial(d) for d in (denials_raw if isinstance(denials_raw, list) else []) if d)
    return Envelope(
        result=result if isinstance(result, str) else ("" if result is None else str(result)),
        session_id=sid if isinstance(sid, str) and sid else None,
        cost_usd=float(cost)
        if isinstance(cost, int | float) and not isinstance(cost, bool)
        else None,
        usage=usage,
        is_error=obj.get("is_error") is True,
        subtype=subtype if isinstance(subtype, str) else None,
        errors=errors,
        terminal_reason=reason if isinstance(reason, str) else None,
        api_error_status=status
        if isinstance(status, int) and not isinstance(status, bool)
        else None,
        denials=denials,
        structured=json.dumps(obj["structured_output"]) if "structured_output" in obj else None,
    )


def _denial(d: Any) -> str:
    """A permission denial as ``Tool(the input that was refused)``, clipped to a line."""
    if not isinstance(d, Mapping):
        return str(d)[:200]
    tool = str(d.get("tool_name") or "tool")
    given = d.get("tool_input")
    shown = ""
    if isinstance(given, Mapping):
        first = given.get("command") or given.get("file_path") or given.get("pattern")
        shown = str(first) if first is not None else json.dumps(given, sort_keys=True)
    return f"{tool}({_clip(shown, 160)})" if shown else tool


def _error_text(e: Any) -> str:
    if isinstance(e, str):
        return e
    if isinstance(e, Mapping) and isinstance(e.get("message"), str):
        return str(e["message"])
    return json.dumps(e, sort_keys=True)


class _Common(TypedDict):
    """What every Output made from an envelope carries, whatever its verdict."""

    session_id: str | None
    spend: Spend
    duration_s: float
    denials: tuple[str, ...]


def from_envelope(
    env: Envelope, res: ProcResult, started: str | None, budget: float | None
) -> Output:
    sid = env.session_id or started
    cost = env.cost_usd if env.cost_usd is not None else 0.0
    common: _Common = {
        "session_id": sid,
        "spend": Spend(cost, env.cost_usd is None, env.usage),
        "duration_s": res.duration_s,
        "denials": env.denials,
    }
    if env.subtype == BUDGET_SUBTYPE or env.terminal_reason == "budget_exhausted":
        spent = "an unknown amount" if env.cost_usd is None else f"${env.cost_usd:.4f}"
        limit = "" if budget is None else f" of ${budget:.4f}"
        return Output(
            res.exit_code,
            env.result,
            error="budget_exceeded",
            detail=f"claude stopped at its --max-budget-usd limit{limit}: spent {spent}",
            **common,
        )
    if env.subtype == TURNS_SUBTYPE or env.terminal_reason == "max_turns":
        return Output(
            res.exit_code,
            env.result,
            error="turn_limit",
            detail=f"claude stopped at its turn limit: {_clip(env.failure_cause or 'max_turns')}; "
            "a retry on turn_limit continues this session where it stopped (retry: {max: 1, "
            "on: [turn_limit]}), or raise the node's max_turns",
            **common,
        )
    if env.is_error and (hit := classify(env.failure_cause, env.api_error_status)):
        return Output(
            res.exit_code,
            env.result,
            error="run_error",
            detail=f"claude stopped at {hit.describe()}; the run pauses until it resets",
            limit=hit,
            **common,
        )
    if env.is_error:
        return Output(
            res.exit_code, env.result, error="run_error", detail=_error_detail(env, res), **common
        )
    if not env.result.strip():
        return Output(
            res.exit_code,
            env.result,
            error="output_error",
            detail="the agent exited without answering: claude's reply has an empty result "
            f"({env.terminal_reason or 'no terminal_reason'}); the node's prompt may need to "
            "ask for an answer, or the session ended early",
            **common,
        )
    return Output(res.exit_code, env.result, structured=env.structured, **common)


def _error_detail(env: Envelope, res: ProcResult) -> str:
    """What an ``is_error`` reply means, by ``terminal_reason`` and ``api_error_status`` (never
    by ``subtype`` alone: 2.1.x reports API failures as ``subtype: success``), with the fix."""
    said = env.failure_cause or (
        f"exit {res.exit_code}, no message; stderr: {_tail(res.stderr)}"
        if res.stderr.strip()
        else f"exit {res.exit_code}, no message"
    )
    said = _clip(said)
    status = env.api_error_status
    if "no conversation found" in said.lower():
        return f"claude could not resume the parent's session: {said}; {SESSION_HINT}"
    if status in (401, 403) or _AUTH_MARKERS.search(said):
        return f"claude could not authenticate (HTTP {status or '?'}): {said}; {LOGIN_HINT}"
    if status == 429:
        return (
            f"the API rate-limited claude (HTTP 429): {said}; lower the graph's concurrency, "
            "or retry the node later (retry: {max: 2, on: [run_error], backoff: …})"
        )
    if status is not None and status >= 500:
        return (
            f"the API failed (HTTP {status}{', overloaded' if status == 529 else ''}): {said}; "
            "an outage is not a verdict on the work — retry later (https://status.anthropic.com)"
        )
    if env.subtype == "error_during_execution":
        return f"claude failed while running: {said}; the CLI's own error, not a verdict"
    return f"claude reported an error: {said}; {_error_hint(said)}"


def _error_hint(cause: str) -> str:
    low = cause.lower()
    if _AUTH_MARKERS.search(low):
        return LOGIN_HINT
    return (
        "this is a failure of the claude CLI or its API, not a judgment of the work; "
        f"retry later or check the account ({LOGIN_HINT})"
    )


def env_failure(res: ProcResult, started: str | None) -> Output:
    said = _tail(res.stderr) or _tail(res.stdout) or "no output"
    return _unanswered(
        res,
        started,
        "run_error",
        f"environment failure: claude exited {res.exit_code}: {said} — "
        f"{INSTALL_HINT}; this never fires a feedback loop",
    )


def output_error(res: ProcResult, started: str | None) -> Output:
    if not res.stdout.strip():
        detail = "claude produced no output"
    else:
        detail = f"claude output was not a JSON envelope: {_head(res.stdout)}"
    if res.exit_code not in (0, None):
        detail += f" (exit {res.exit_code})"
    if res.stderr.strip():
        detail += f" (claude stderr: {_tail(res.stderr)})"
    return _unanswered(
        res,
        started,
        "output_error",
        detail,
    )


def _unanswered(
    res: ProcResult,
    started: str | None,
    error: Cause,
    detail: str,
    *,
    stopped: bool = False,
    retries: Retries | None = None,
) -> Output:
    """An execution that ended without a reply envelope: its cost is unknown."""
    return Output(
        None if stopped else res.exit_code,
        res.stdout,
        session_id=started,
        spend=Spend(cost_unknown=True),
        error=error,
        detail=detail,
        duration_s=res.duration_s,
        api_retries=0 if retries is None else retries.count,
    )


def _tail(text: str) -> str:
    return tail(text, STDERR_TAIL, mark="…(truncated) ")


def _head(text: str, limit: int = STDOUT_HEAD) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " …(truncated)"


def _clip(text: str, limit: int = STDERR_TAIL) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " …(truncated)"
