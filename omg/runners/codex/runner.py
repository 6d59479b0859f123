"""The codex runtime: one agent node as one ``codex exec --json`` run.

The child's environment is the caller's business (``process.child_env`` with this runner's
``env_prefixes``). This module resolves the binary, builds argv, spawns through the injected
``Spawner``, and leaves what the events mean to ``events`` and ``reply``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from omg.runners.agent import AgentRunner
from omg.runners.base import Invocation, Output
from omg.runners.codex import config, cost, events, keys, rehearsal, reply, rollout
from omg.runners.codex.reply import BIN_ENV
from omg.runners.process import Spawner
from omg.spend import Spend

#: Prefixes passed only to the codex runtime: its key (OPENAI_API_KEY, CODEX_API_KEY), its
#: home (CODEX_HOME) and omg's endpoint setting for it. Claude and shell nodes never see them.
PREFIXES = ("OPENAI_", "CODEX_", "OMG_CODEX_")
#: What each permission_mode means to codex (``--sandbox``); codex asks no approvals in exec.
SANDBOX = {
    None: "workspace-write",
    "default": "workspace-write",
    "acceptEdits": "workspace-write",
    "dontAsk": "workspace-write",
    "auto": "workspace-write",
    "plan": "read-only",
    "bypassPermissions": "danger-full-access",
}
#: omg's provider name when OMG_CODEX_BASE_URL points codex at another Responses API.
PROVIDER = "omg"
#: The provider's retries: codex's defaults take up to half a minute on a 500 (it retries
#: the request and the stream); one retry each keeps a failing API a matter of seconds.
REQUEST_RETRIES, STREAM_RETRIES = 1, 1
#: The file in codex's home that holds a node's output_schema (``--output-schema``).
SCHEMA_FILE = "omg-output-schema.json"


class CodexRunner(AgentRunner):
    """Runs an agent node with the real OpenAI Codex CLI, non-interactively.

    argv, in this fixed order; the prompt goes on standard input (``-``)::

        <bin> [-c model_provider=omg -c model_providers.omg.… ]   # OMG_CODEX_BASE_URL set
              exec --json --skip-git-repo-check
              --sandbox <read-only|workspace-write|danger-full-access>   # permission_mode
              -c approval_policy="never"
              -c shell_environment_policy.exclude=["OPENAI_API_KEY", "CODEX_API_KEY"]
              --ignore-user-config --strict-config | --trust          # node.project_settings
              [-m <model>]                                            # node.model
              [resume <thread> | fork <thread>]                        # a retry | a handoff
              [--output-schema $CODEX_HOME/omg-output-schema.json]     # node.output_schema
              -

    Each execution runs in a room of its own (``furnish``): ``CODEX_HOME`` is a fresh
    directory there, so a ``config.toml`` another node wrote into a codex home is never read.
    """

    name = "codex"
    bin_env = BIN_ENV
    install_hint = reply.INSTALL_HINT
    names_sessions = False
    env_prefixes: tuple[str, ...] = PREFIXES
    transcript_home = "$CODEX_HOME (or ~/.codex)/sessions/"
    pin_hint = "npm install @openai/codex@X"
    room_env: tuple[str, ...] = (config.HOME,)

    # -- what omg keeps and rehearses: this runtime's own modules --------------------------
    furnish = staticmethod(config.furnish)
    steps = staticmethod(rollout.steps)
    rehearsal_env = staticmethod(rehearsal.rehearsal_env)
    rehearsal_tags = staticmethod(rehearsal.rehearsal_tags)
    endpoint = staticmethod(rehearsal.endpoint)
    hold_key = staticmethod(keys.hold_key)
    keyless = staticmethod(keys.keyless)
    through_proxy = staticmethod(keys.through_proxy)
    pricer = staticmethod(keys.pricer)

    def transcript(self, env: Mapping[str, str], cwd: Path, session: str) -> Path | None:
        return rollout.path(env, session)

    # -- binary ----------------------------------------------------------------------------
    def unusable(self, wanted: str, source: str) -> str:
        return f"{wanted!r} is not an executable file; {reply.INSTALL_HINT}"

    def missing(self, wanted: str, source: str) -> str:
        return f"codex CLI not found: {wanted!r} is not on PATH; {reply.INSTALL_HINT}"

    def version_of(self, said: str) -> str:
        """``codex --version``'s number (e.g. 0.169.0)."""
        found = re.search(r"\d+\.\d+\.\d+\S*", said)
        return found.group(0) if found else ""

    # -- argv ------------------------------------------------------------------------------
    def argv(self, inv: Invocation) -> list[str]:
        binary, _ = self.resolve_binary()
        node = inv.node
        out = [binary or self.name, *provider_flags(inv.env)]
        out += ["exec", "--json", "--skip-git-repo-check"]
        out += ["--sandbox", SANDBOX.get(node.permission_mode, "workspace-write")]
        out += ["-c", 'approval_policy="never"', *config.flags(node.project_settings)]
        if node.model:
            out += ["-m", node.model]
        if inv.resume_session:
            out += ["fork" if inv.fork else "resume", inv.resume_session]
        if node.output_schema is not None:
            out += ["--output-schema", str(schema_file(inv.env))]
        return [*out, "-"]

    # -- run -------------------------------------------------------------------------------
    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        binary, problem = self.resolve_binary()
        if binary is None:
            return Output(None, "", error="run_error", detail=problem)
        version = self.version()
        if inv.env.get("CODEX_HOME"):  # codex refuses a CODEX_HOME that does not exist
            try:
                config.users_home(inv.env).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                detail = f"CODEX_HOME {inv.env['CODEX_HOME']!r} cannot be made: {exc.strerror}"
                return Output(None, "", error="run_error", detail=detail)
        if inv.node.output_schema is not None:  # the file its --output-schema names
            try:
                schema_file(inv.env).write_text(inv.node.output_schema, encoding="utf-8")
            except OSError as exc:
                detail = f"cannot write the output schema for codex: {exc.strerror or exc}"
                return Output(None, "", error="run_error", detail=detail)
        before = (
            rollout.totals(rollout.path(inv.env, inv.resume_session)) if inv.resume_session else {}
        )
        # reaped: danger-full-access children and codex-code-mode-host outlive no session
        res = self.session(inv, spawn, give_up=events.AuthRetries())
        if res.spawn_error is not None:
            return self.not_started(binary, res)
        stream = events.parse(res.stdout)
        if res.gave_up is not None or res.timed_out or res.idle:
            idle = inv.node.idle_timeout if res.idle else None
            out = reply.stopped(res, stream, inv.timeout_s, idle)
            return _versioned(out, version)
        if res.exit_code in (126, 127):
            said = reply.stderr_tail(res) or "no output"
            detail = (
                f"environment failure: codex exited {res.exit_code}: {said} — {reply.INSTALL_HINT}"
            )
            return Output(res.exit_code, "", stream.thread_id, error="run_error", detail=detail)
        used = rollout.delta(stream.usage, before) if inv.resume_session else dict(stream.usage)
        dollars = cost.price(used, inv.node.model, inv.prices)
        spend = Spend(dollars or 0.0, dollars is None, used)
        return _versioned(reply.from_stream(stream, res, spend), version)


def schema_file(env: Mapping[str, str]) -> Path:
    """Where an execution's output schema is written for ``--output-schema``: its codex home
    (the room's; a dry run shows the variable)."""
    return Path(env.get(config.HOME) or f"${config.HOME}") / SCHEMA_FILE


def _versioned(out: Output, version: str) -> Output:
    return replace(out, tool_version=version)


def provider_flags(env: Mapping[str, str]) -> list[str]:
    """``-c`` flags defining omg's provider when OMG_CODEX_BASE_URL names a Responses API
    (a rehearsal's stub, a proxy): its URL, the key variable, capped retries, and the
    rehearsal's node headers (sent from variables only a rehearsal sets)."""
    url = env.get(config.BASE_URL_ENV)
    if not url:
        return []
    p = f"model_providers.{PROVIDER}"
    headers = (
        "{"
        + ", ".join(f"{json.dumps(h)} = {json.dumps(v)}" for h, v in rehearsal.TAGS.items())
        + "}"
    )
    flags = [
        f"model_provider={json.dumps(PROVIDER)}",
        f"{p}.name={json.dumps(PROVIDER)}",
        f"{p}.base_url={json.dumps(url)}",
        f'{p}.wire_api="responses"',
        f'{p}.env_key="OPENAI_API_KEY"',
        f"{p}.request_max_retries={REQUEST_RETRIES}",
        f"{p}.stream_max_retries={STREAM_RETRIES}",
        f"{p}.env_http_headers={headers}",
    ]
    return [x for f in flags for x in ("-c", f)]
