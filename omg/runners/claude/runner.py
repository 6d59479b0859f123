"""The claude runtime: one agent node as one ``claude -p --output-format stream-json`` session.

The child's environment is the caller's business (``process.child_env`` with this runner's
``env_prefixes``); this module adds no variables. It resolves the binary, builds argv, spawns
through the injected ``Spawner``, and leaves what the reply means to ``reply``.
"""

from __future__ import annotations

import re
from dataclasses import replace

from omg.runners.agent import AgentRunner
from omg.runners.base import Invocation, Output
from omg.runners.claude import config, rehearsal, reply
from omg.runners.claude.reply import BIN_ENV
from omg.runners.claude.stream import AuthRetries, api_retries
from omg.runners.claude.transcript import size, steps, transcript_path
from omg.runners.process import Spawner

#: Prefixes passed only to the claude runtime (its endpoint, auth and settings). Secrets
#: (ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN) reach a shell node or verify command only when
#: its ``env:`` names them.
PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_", "CLAUDE_CONFIG_DIR")


class ClaudeRunner(AgentRunner):
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

    name = "claude"
    bin_env = BIN_ENV
    install_hint = reply.INSTALL_HINT
    names_sessions = True
    env_prefixes: tuple[str, ...] = PREFIXES
    transcript_home = "$CLAUDE_CONFIG_DIR (or ~/.claude)/projects/"
    pin_hint = "npm install @anthropic-ai/claude-code@X"
    room_env: tuple[str, ...] = (config.CONFIG_DIR,)

    # -- what omg keeps and rehearses: this runtime's own modules --------------------------
    furnish = staticmethod(config.furnish)
    transcript = staticmethod(transcript_path)
    steps = staticmethod(steps)
    rehearsal_env = staticmethod(rehearsal.rehearsal_env)
    rehearsal_tags = staticmethod(rehearsal.rehearsal_tags)
    endpoint = staticmethod(rehearsal.endpoint)

    # -- binary ----------------------------------------------------------------------------
    def unusable(self, wanted: str, source: str) -> str:
        return f"{source} names {wanted!r}, which is not an executable file; {reply.INSTALL_HINT}"

    def missing(self, wanted: str, source: str) -> str:
        where = f"{wanted!r} was not found on PATH"
        if source == BIN_ENV:
            where = f"{BIN_ENV}={where}"
        return f"claude CLI not found: {where}; {reply.INSTALL_HINT}"

    def version_of(self, said: str) -> str:
        """``claude --version``'s version number (e.g. 2.1.332)."""
        first = (said.split() or [""])[0]
        return first if re.fullmatch(r"\d+(\.\d+)+\S*", first) else ""

    # -- argv ------------------------------------------------------------------------------
    def argv(self, inv: Invocation) -> list[str]:
        binary, _ = self.resolve_binary()
        node = inv.node
        out = [binary or self.name, "-p", "--output-format", "stream-json", "--verbose"]
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

    # -- run -------------------------------------------------------------------------------
    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        binary, problem = self.resolve_binary()
        if binary is None:
            return Output(None, "", error="run_error", detail=problem)
        started_session = inv.session_id or inv.resume_session
        version = self.version()
        transcript = transcript_path(inv.env, inv.cwd, started_session)
        res = self.session(
            inv,
            spawn,
            give_up=AuthRetries(),  # the CLI retries a refused key for minutes
            activity=(lambda: size(transcript)) if transcript is not None else None,
        )
        retries = api_retries(res.stdout)
        if res.spawn_error is not None:
            return self.not_started(binary, res)
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


def _usd(value: float) -> str:
    """Shortest plain decimal for a dollar amount (never exponent notation)."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        text = f"{value:.12f}".rstrip("0").rstrip(".")
    return text
