"""The claude runtime: one agent node as one ``claude -p … --output-format json`` session.

The child's environment is the caller's business (``process.child_env(…, runtime="claude")``);
this module adds no variables. It only resolves the binary, builds argv, spawns through the
injected ``Spawner`` and maps the reply's JSON envelope onto an ``Output``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from omg.runners import Invocation, Output
from omg.runners.process import ProcResult, Spawner, tail

#: Parent-environment variable naming the claude binary (a path, or a name looked up on PATH).
BIN_ENV = "OMG_CLAUDE_BIN"
DEFAULT_BIN = "claude"
INSTALL_HINT = (
    "install it with `npm install -g @anthropic-ai/claude-code`, "
    f"or set {BIN_ENV} to the path of the claude binary"
)
LOGIN_HINT = (
    "log in with `claude /login`, "
    "or set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN for the runner"
)
BUDGET_SUBTYPE = "error_max_budget_usd"
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
STDERR_TAIL = 500
STDOUT_HEAD = 200
#: Words that mark an error reply as an authentication problem (the login hint comes first).
_AUTH_MARKERS = (
    "not logged in",
    "/login",
    "api key",
    "oauth",
    "authentication",
    "unauthorized",
    "401",
    "403",
)


#: The headers a rehearsed agent node's requests carry, so the stub model knows who asks.
NODE_HEADER, ROUND_HEADER, ATTEMPT_HEADER = "X-Omg-Node", "X-Omg-Round", "X-Omg-Attempt"


def rehearsal_tags(env: Mapping[str, str], node: str, round_: int, attempt: int) -> dict[str, str]:
    """``env`` with ANTHROPIC_CUSTOM_HEADERS naming the node, round and attempt (the CLI sends
    them with every request)."""
    tags = f"{NODE_HEADER}: {node}\n{ROUND_HEADER}: {round_}\n{ATTEMPT_HEADER}: {attempt}"
    return {**env, "ANTHROPIC_CUSTOM_HEADERS": tags}


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

    @property
    def failure_cause(self) -> str:
        """What went wrong, in claude's words: its ``errors`` list, else the reply text."""
        if self.errors:
            return " / ".join(self.errors)
        return self.result.strip()


class ClaudeRunner:
    """Runs an agent node with the real Claude Code CLI in print mode.

    argv, in this fixed order (each optional flag only when the node or invocation sets it);
    the prompt goes on standard input, so a prompt of any size starts (an argument over
    128 KiB would not)::

        <bin> -p --output-format stream-json --verbose
              [--permission-mode <mode>]      # node.permission_mode
              [--max-budget-usd <usd>]        # inv.budget_usd > 0
              [--agent <name>]                # node.agent
              [--model <name>]                # node.model
              [--allowedTools <a,b,c>]        # node.allowed_tools, non-empty
              [--resume <parent> --fork-session --session-id <id> | --session-id <id>]

    ``stream-json`` reports the API's retries as they happen (``system/api_retry``), so an
    outage is told from a slow session; the last line is the same result envelope ``json``
    gives. A handoff forks the parent's session, so siblings never share one.

    ``--permission-mode`` is passed only when the node declares one: an undeclared mode leaves
    the choice to claude's own settings (the project's or user's ``permissions.defaultMode``)
    rather than omg silently imposing one; a graph that needs a mode says so.
    """

    def __init__(self, binary: str | None = None, parent_env: Mapping[str, str] | None = None):
        self._binary = binary
        self._parent_env = parent_env

    # -- binary ----------------------------------------------------------------------------
    def resolve_binary(self) -> tuple[str | None, str]:
        """(path of the claude binary, "") or (None, why it could not be found)."""
        parent = os.environ if self._parent_env is None else self._parent_env
        if self._binary is not None:
            wanted, source = self._binary, "the configured claude binary"
        elif parent.get(BIN_ENV):
            wanted, source = parent[BIN_ENV], BIN_ENV
        else:
            wanted, source = DEFAULT_BIN, "PATH"
        if os.sep in wanted:
            path = os.path.abspath(wanted)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path, ""
            why = f"{source} names {wanted!r}, which is not an executable file"
            return None, f"{why}; {INSTALL_HINT}"
        found = shutil.which(wanted, path=parent.get("PATH", os.defpath))
        if found is not None:
            return os.path.abspath(found), ""
        where = f"{wanted!r} was not found on PATH"
        if source == BIN_ENV:
            where = f"{BIN_ENV}={where}"
        return None, f"claude CLI not found: {where}; {INSTALL_HINT}"

    # -- argv ------------------------------------------------------------------------------
    def argv(self, inv: Invocation) -> list[str]:
        binary, _ = self.resolve_binary()
        node = inv.node
        out = [binary or DEFAULT_BIN, "-p", "--output-format", "stream-json", "--verbose"]
        if node.permission_mode is not None:
            out += ["--permission-mode", node.permission_mode]
        if inv.budget_usd is not None and inv.budget_usd > 0:
            out += ["--max-budget-usd", _usd(inv.budget_usd)]
        if node.agent:
            out += ["--agent", node.agent]
        if node.model:
            out += ["--model", node.model]
        if node.allowed_tools:
            out += ["--allowedTools", ",".join(node.allowed_tools)]
        if inv.resume_session:
            out += ["--resume", inv.resume_session, "--fork-session"]
        if inv.session_id:
            out += ["--session-id", inv.session_id]
        return out

    def version(self) -> str:
        """``claude --version``'s version number (e.g. 2.1.332), asked once per binary; ""
        when it does not say one. Asked through the process chokepoint, not the node's
        spawner: it is omg's question, not the node's work."""
        from omg.runners.process import spawn

        binary, _ = self.resolve_binary()
        if binary is None:
            return ""
        if binary not in _VERSIONS:
            env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/")}
            done = spawn([binary, "--version"], cwd=Path.cwd(), env=env, timeout_s=30)
            first = (done.stdout.split() or [""])[0]
            _VERSIONS[binary] = first if re.fullmatch(r"\d+(\.\d+)+\S*", first) else ""
        return _VERSIONS[binary]

    # -- run -------------------------------------------------------------------------------
    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        binary, problem = self.resolve_binary()
        if binary is None:
            return Output(None, "", error="run_error", detail=problem)
        started_session = inv.session_id or inv.resume_session
        version = self.version()
        transcript = transcript_path(inv.env, inv.cwd, started_session)
        res = spawn(
            self.argv(inv),
            cwd=inv.cwd,
            env=inv.env,
            timeout_s=inv.timeout_s,
            stdin=inv.text,
            idle_s=inv.node.idle_timeout_s,
            activity=(lambda: _size(transcript)) if transcript is not None else None,
            reap=True,  # the agent's tools run in sessions of their own: none outlives it
        )
        retries = _api_retries(res.stdout)
        if res.spawn_error is not None:
            return Output(
                None,
                "",
                error="run_error",
                detail=f"could not start claude ({binary}): {res.spawn_error}; {INSTALL_HINT}",
                duration_s=res.duration_s,
            )
        if res.timed_out or res.idle:
            if res.idle:
                what = (
                    f"stuck: no output and no transcript growth for {inv.node.idle_timeout} "
                    "(idle_timeout); claude and every process it started were stopped"
                )
            else:
                what = (
                    f"timed out after {inv.timeout_s:g}s (node timeout); claude and every "
                    "process it started were stopped"
                )
            if retries:
                what += f"; the API was failing meanwhile: {retries.describe()}"
            return Output(
                None,
                res.stdout,
                session_id=started_session,
                cost_unknown=True,
                error="idle_timeout" if res.idle else ("run_error" if retries else "timeout"),
                detail=f"{what}; cost unknown (stopped before reporting)",
                duration_s=res.duration_s,
                api_retries=retries.count,
            )
        if res.exit_code in (126, 127):
            return _env_failure(res, started_session)
        envelope = parse_envelope(res.stdout)
        if envelope is None:
            if "command not found" in (res.stderr + res.stdout)[-2000:]:
                return _env_failure(res, started_session)
            if res.exit_code not in (0, None) and res.stderr.strip():
                return _refused(res, started_session)
            return _output_error(res, started_session)
        out = _from_envelope(envelope, res, started_session, inv.budget_usd)
        reported = envelope.cost_usd
        if inv.resume_session and reported is not None:  # --resume reports the whole session
            out = replace(out, cost_usd=max(0.0, reported - inv.resume_cost_usd))
        return replace(
            out,
            session_cost_usd=reported,
            tool_version=version,
            api_retries=retries.count,
        )


_VERSIONS: dict[str, str] = {}


def transcript_path(env: Mapping[str, str], cwd: Path, session: str | None) -> Path | None:
    """Where claude keeps a session's transcript: ``<config>/projects/<cwd, every character
    that is not a letter or digit replaced by '-'>/<session>.jsonl``; the config directory is
    ``CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    if not session:
        return None
    config = env.get("CLAUDE_CONFIG_DIR") or (
        os.path.join(env["HOME"], ".claude") if env.get("HOME") else None
    )
    if config is None:
        return None
    project = re.sub(r"[^A-Za-z0-9]", "-", str(cwd.resolve()))
    return cwd / config / "projects" / project / f"{session}.jsonl"  # a relative one is cwd's


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


@dataclass(frozen=True)
class Retries:
    count: int = 0
    statuses: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return self.count > 0

    def describe(self) -> str:
        shown = sorted(set(self.statuses))
        what = "retry" if self.count == 1 else "retries"
        return f"{self.count} API {what} (HTTP {', '.join(map(str, shown)) or '?'})"


def _api_retries(stdout: str) -> Retries:
    """The ``system/api_retry`` events of a stream-json transcript."""
    count, statuses = 0, []
    for line in stdout.splitlines():
        if '"api_retry"' not in line:
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("subtype") == "api_retry":
            count += 1
            if isinstance(ev.get("error_status"), int):
                statuses.append(int(ev["error_status"]))
    return Retries(count, tuple(statuses))


def _refused(res: ProcResult, started: str | None) -> Output:
    """claude exited non-zero with only stderr: it refused its arguments or environment."""
    said = _tail(res.stderr)
    low = said.lower()
    hint = "check the node's agent, model, session and permission settings against `claude --help`"
    if "root" in low and ("dangerously-skip-permissions" in low or "bypass" in low):
        hint = (
            "claude refuses bypassPermissions as root (common in CI containers): run the job as "
            "a non-root user, or use permission_mode acceptEdits / dontAsk with allowed_tools"
        )
    elif "no conversation found" in low:
        hint = (
            "the session to resume is not on this machine: its transcript travels with the run "
            "(restored before --resume); re-run the parent node, or use handoff: artifact"
        )
    elif "not found" in low and "agent" in low:
        hint = "define the agent under .claude/agents/ in the repository, or fix the node's agent:"
    return Output(
        res.exit_code,
        res.stdout,
        session_id=started,
        cost_unknown=True,
        error="run_error",
        detail=f"claude refused to start (exit {res.exit_code}): {said}; {hint}",
        duration_s=res.duration_s,
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


def _pick(obj: Any) -> dict[str, Any] | None:
    if isinstance(obj, list):
        for item in reversed(obj):
            picked = _pick(item) if isinstance(item, dict) else None
            if picked is not None:
                return picked
        return None
    if isinstance(obj, dict) and (obj.get("type") == "result" or "result" in obj):
        return obj
    return None


def _envelope(obj: Mapping[str, Any]) -> Envelope:
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


def _from_envelope(
    env: Envelope, res: ProcResult, started: str | None, budget: float | None
) -> Output:
    sid = env.session_id or started
    cost = env.cost_usd if env.cost_usd is not None else 0.0
    common: dict[str, Any] = dict(
        session_id=sid,
        cost_usd=cost,
        cost_unknown=env.cost_usd is None,
        usage=env.usage,
        duration_s=res.duration_s,
        denials=env.denials,
    )
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
    return Output(res.exit_code, env.result, **common)


def _error_detail(env: Envelope, res: ProcResult) -> str:
    """What an ``is_error`` reply means, by ``terminal_reason`` and ``api_error_status`` (never
    by ``subtype`` alone: 2.1.x reports API failures as ``subtype: success``), with the fix."""
    said = env.failure_cause or (
        f"exit {res.exit_code}, no message; stderr: {_tail(res.stderr)}"
        if res.stderr.strip()
        else f"exit {res.exit_code}, no message"
    )
    said = _clip(said)
    status, reason = env.api_error_status, env.terminal_reason
    if status in (401, 403) or any(m in said.lower() for m in _AUTH_MARKERS):
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
    if env.subtype == "error_max_turns" or reason == "max_turns":
        return f"claude ran out of turns: {said}; give the node more room or a narrower prompt"
    if env.subtype == "error_during_execution":
        return f"claude failed while running: {said}; the CLI's own error, not a verdict"
    return f"claude reported an error: {said}; {_error_hint(said)}"


def _error_hint(cause: str) -> str:
    low = cause.lower()
    if any(m in low for m in _AUTH_MARKERS):
        return LOGIN_HINT
    return (
        "this is a failure of the claude CLI or its API, not a judgment of the work; "
        f"retry later or check the account ({LOGIN_HINT})"
    )


def _env_failure(res: ProcResult, started: str | None) -> Output:
    said = _tail(res.stderr) or _tail(res.stdout) or "no output"
    return Output(
        res.exit_code,
        res.stdout,
        session_id=started,
        cost_unknown=True,
        error="run_error",
        detail=f"environment failure: claude exited {res.exit_code}: {said} — "
        f"{INSTALL_HINT}; this never fires a feedback loop",
        duration_s=res.duration_s,
    )


def _output_error(res: ProcResult, started: str | None) -> Output:
    if not res.stdout.strip():
        detail = "claude produced no output"
    else:
        detail = f"claude output was not a JSON envelope: {_head(res.stdout)}"
    if res.exit_code not in (0, None):
        detail += f" (exit {res.exit_code})"
    if res.stderr.strip():
        detail += f" (claude stderr: {_tail(res.stderr)})"
    return Output(
        res.exit_code,
        res.stdout,
        session_id=started,
        cost_unknown=True,
        error="output_error",
        detail=detail,
        duration_s=res.duration_s,
    )


def _usd(value: float) -> str:
    """Shortest plain decimal for a dollar amount (never exponent notation)."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        text = f"{value:.12f}".rstrip("0").rstrip(".")
    return text


def _tail(text: str) -> str:
    return tail(text, STDERR_TAIL, mark="…(truncated) ")


def _head(text: str, limit: int = STDOUT_HEAD) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " …(truncated)"


def _clip(text: str, limit: int = STDERR_TAIL) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + " …(truncated)"
