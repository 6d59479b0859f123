"""The claude runtime: one agent node as one ``claude -p --output-format stream-json`` session.

The child's environment is the caller's business (``process.child_env`` with this runner's
``env_prefixes``); this module adds no variables. It resolves the binary, builds argv, spawns
through the injected ``Spawner``, and leaves what the reply means to ``reply``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from omg.runners.base import Invocation, Output, Step
from omg.runners.claude import config, rehearsal, reply
from omg.runners.claude.reply import BIN_ENV
from omg.runners.claude.stream import AuthRetries, api_retries
from omg.runners.claude.transcript import size, steps, transcript_path
from omg.runners.process import Spawner
from omg.runners.room import Room

DEFAULT_BIN = "claude"

#: Prefixes passed only to the claude runtime (its endpoint, auth and settings). Secrets
#: (ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN) reach a shell node or verify command only when
#: its ``env:`` names them.
PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_", "CLAUDE_CONFIG_DIR")


class ClaudeRunner:
    """Runs an agent node with the real Claude Code CLI in print mode.

    argv, in this fixed order (each optional flag only when the node or invocation sets it);
    the prompt goes on standard input, so a prompt of any size starts (an argument over
    128 KiB would not)::

        <bin> -p --output-format stream-json --verbose
              --setting-sources user --strict-mcp-config   # the room's settings alone, or
              | --setting-sources user,project,local       # node.project_settings
              [--permission-mode <mode>]      # node.permission_mode
              [--max-budget-usd <usd>]        # inv.budget_usd > 0
              [--agent <name>]                # node.agent
              [--model <name>]                # node.model
              [--allowedTools <a,b,c>]        # node.allowed_tools, non-empty
              [--max-turns <n>]               # node.max_turns
              [--resume <parent> --fork-session --session-id <id> | --session-id <id>
               | --resume <own session>]       # a retry continuing a turn-limited attempt

    ``stream-json`` reports the API's retries as they happen (``system/api_retry``), so an
    outage is told from a slow session; the last line is the same result envelope ``json``
    gives. A handoff forks the parent's session, so siblings never share one.

    Each execution runs in a room of its own (``furnish``): ``CLAUDE_CONFIG_DIR`` is a fresh
    directory there, so settings, hooks, plugins and transcripts another node left in a
    configuration directory are never read, and the user and project setting sources are the
    room's and — only for a node with ``project_settings: true`` — the checkout's.

    ``--permission-mode`` is passed only when the node declares one: an undeclared mode leaves
    the choice to claude's own settings (the project's or user's ``permissions.defaultMode``)
    rather than omg silently imposing one; a graph that needs a mode says so.
    """

    names_sessions = True
    env_prefixes: tuple[str, ...] = PREFIXES
    transcript_home = "$CLAUDE_CONFIG_DIR (or ~/.claude)/projects/"
    pin_hint = "npm install @anthropic-ai/claude-code@X"
    room_env: tuple[str, ...] = (config.CONFIG_DIR,)

    def __init__(self, binary: str | None = None, parent_env: Mapping[str, str] | None = None):
        self._binary = binary
        self._parent_env = parent_env

    # -- what omg keeps and rehearses ------------------------------------------------------
    def furnish(self, room: Room, env: Mapping[str, str]) -> dict[str, str]:
        return config.furnish(room, env)

    def transcript(self, env: Mapping[str, str], cwd: Path, session: str) -> Path | None:
        return transcript_path(env, cwd, session)

    def steps(self, transcript: Path) -> list[Step]:
        return steps(transcript)

    def rehearsal_env(self, parent: Mapping[str, str], url: str) -> dict[str, str]:
        return rehearsal.rehearsal_env(parent, url)

    def rehearsal_tags(
        self, env: Mapping[str, str], node: str, round_: int, attempt: int
    ) -> dict[str, str]:
        return rehearsal.rehearsal_tags(env, node, round_, attempt)

    def endpoint(self, url: str) -> dict[str, str]:
        return rehearsal.endpoint(url)

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
            return None, f"{why}; {reply.INSTALL_HINT}"
        found = shutil.which(wanted, path=parent.get("PATH", os.defpath))
        if found is not None:
            return os.path.abspath(found), ""
        where = f"{wanted!r} was not found on PATH"
        if source == BIN_ENV:
            where = f"{BIN_ENV}={where}"
        return None, f"claude CLI not found: {where}; {reply.INSTALL_HINT}"

    # -- argv ------------------------------------------------------------------------------
    def argv(self, inv: Invocation) -> list[str]:
        binary, _ = self.resolve_binary()
        node = inv.node
        out = [binary or DEFAULT_BIN, "-p", "--output-format", "stream-json", "--verbose"]
        out += config.flags(node.project_settings)
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
        if node.max_turns is not None:
            out += ["--max-turns", str(node.max_turns)]
        if inv.resume_session:
            out += ["--resume", inv.resume_session] + (["--fork-session"] if inv.fork else [])
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
            done = spawn([binary, "--version"], cwd=Path.cwd(), env=env, timeout_s=10)
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
            activity=(lambda: size(transcript)) if transcript is not None else None,
            reap=True,  # the agent's tools run in sessions of their own: none outlives it
            give_up=AuthRetries(),  # the CLI retries a refused key for minutes
        )
        retries = api_retries(res.stdout)
        if res.spawn_error is not None:
            return Output(
                None,
                "",
                error="run_error",
                detail=f"could not start claude ({binary}): {res.spawn_error}; "
                + reply.INSTALL_HINT,
                duration_s=res.duration_s,
            )
        if res.gave_up is not None:
            return reply.auth_refused(res, started_session, retries)
        if res.timed_out or res.idle:
            idle = inv.node.idle_timeout if res.idle else None
            return reply.stopped(res, started_session, retries, inv.timeout_s, idle)
        if res.exit_code in (126, 127):
            return reply.env_failure(res, started_session)
        envelope = reply.parse_envelope(res.stdout)
        if envelope is None:
            if "command not found" in (res.stderr + res.stdout)[-2000:]:
                return reply.env_failure(res, started_session)
            if res.exit_code not in (0, None) and res.stderr.strip():
                return reply.refused(res, started_session)
            return reply.output_error(res, started_session)
        out = reply.from_envelope(envelope, res, started_session, inv.budget_usd)
        reported = envelope.cost_usd
        spend = replace(out.spend, session_cost_usd=reported)
        if inv.resume_session:  # --resume reports the whole session: priced by the difference
            spend = spend.resumed(inv.resume_cost_usd)
        return replace(
            out,
            spend=spend,
            tool_version=version,
            api_retries=retries.count,
        )


_VERSIONS: dict[str, str] = {}


def _usd(value: float) -> str:
    """Shortest plain decimal for a dollar amount (never exponent notation)."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        text = f"{value:.12f}".rstrip("0").rstrip(".")
    return text
