"""The claude runtime: one agent node as one ``claude -p … --output-format json`` session.

The child's environment is the caller's business (``process.child_env(…, runtime="claude")``);
this module adds no variables. It only resolves the binary, builds argv, spawns through the
injected ``Spawner`` and maps the reply's JSON envelope onto an ``Output``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
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

    @property
    def failure_cause(self) -> str:
        """What went wrong, in claude's words: its ``errors`` list, else the reply text."""
        if self.errors:
            return " / ".join(self.errors)
        return self.result.strip()


class ClaudeRunner:
    """Runs an agent node with the real Claude Code CLI in print mode.

    argv, in this fixed order (each optional flag only when the node or invocation sets it)::

        <bin> -p <prompt> --output-format json
              [--permission-mode <mode>]      # node.permission_mode
              [--max-budget-usd <usd>]        # inv.budget_usd > 0
              [--agent <name>]                # node.agent
              [--model <name>]                # node.model
              [--allowedTools <a,b,c>]        # node.allowed_tools, non-empty
              [--resume <id> | --session-id <id>]

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
        # claude parses its prompt as a positional argument: one starting with "-" would be
        # read as an (unknown) option, so it gets a leading space, harmless to the model.
        prompt = " " + inv.text if inv.text.startswith("-") else inv.text
        out = [binary or DEFAULT_BIN, "-p", prompt, "--output-format", "json"]
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
            out += ["--resume", inv.resume_session]
        elif inv.session_id:
            out += ["--session-id", inv.session_id]
        return out

    # -- run -------------------------------------------------------------------------------
    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        binary, problem = self.resolve_binary()
        if binary is None:
            return Output(None, "", error="run_error", detail=problem)
        started_session = inv.resume_session or inv.session_id
        res = spawn(self.argv(inv), cwd=inv.cwd, env=inv.env, timeout_s=inv.timeout_s)
        if res.spawn_error is not None:
            return Output(
                None,
                "",
                error="run_error",
                detail=f"could not start claude ({binary}): {res.spawn_error}; {INSTALL_HINT}",
                duration_s=res.duration_s,
            )
        if res.timed_out:
            return Output(
                None,
                res.stdout,
                session_id=started_session,
                cost_unknown=True,
                error="timeout",
                detail=f"timed out after {inv.timeout_s:g}s (node timeout); process "
                "group killed; cost unknown (killed before reporting)",
                duration_s=res.duration_s,
            )
        if res.exit_code in (126, 127):
            return _env_failure(res, started_session)
        envelope = parse_envelope(res.stdout)
        if envelope is None:
            if "command not found" in (res.stderr + res.stdout)[-2000:]:
                return _env_failure(res, started_session)
            return _output_error(res, started_session)
        return _from_envelope(envelope, res, started_session, inv.budget_usd)


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
    )


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
    )
    if env.subtype == BUDGET_SUBTYPE:
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
        cause = env.failure_cause or (
            f"exit {res.exit_code}, no message; stderr: {_tail(res.stderr)}"
            if res.stderr.strip()
            else f"exit {res.exit_code}, no message"
        )
        return Output(
            res.exit_code,
            env.result,
            error="run_error",
            detail=f"claude reported an error: {_clip(cause)}; {_error_hint(cause)}",
            **common,
        )
    return Output(res.exit_code, env.result, **common)


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
