"""Runtimes: how one node execution becomes a child process and an Output.

The seam (``base``): every runner is a ``Runner`` — the environment it receives unasked
(``env_prefixes``), its argv (what a dry run shows) and its run, given an ``Invocation`` and
giving back an ``Output``; an agent runtime is an ``AgentRuntime`` as well — whether omg names
its sessions, where its transcripts live and what steps a kept one holds, its configuration
home in an execution's room (``furnish``, ``room_env``), how it is rehearsed against the stub
model (``rehearsal_env``, ``rehearsal_tags``, ``endpoint``) and how its CLI is pinned.

- ``registry``: the one list of runners — ``shell``, and the agent runtimes by the names
  ``omg/runtimes.py`` declares (``agents``); ``STUB_APIS``, which runtime speaks which API the
  stub serves. Only it imports a runtime's folder.
- ``agent``: ``AgentRunner``, the base of each agent runtime's runner — its CLI found (a
  configured path, its ``OMG_<RUNTIME>_BIN``, else PATH), its version asked once, one session
  spawned (the prompt on stdin, the idle watchdog, a ``give_up`` watch, every child reaped).
- ``process``: the one spawn chokepoint — one ``SpawnRequest`` per child (timeouts, the idle
  watchdog, ``give_up`` line watches, reaping), a ``Spawner`` any test may replace;
  ``child_env``, given a runner's prefixes; the one ``tail()``.
- ``room``: an execution's room, the directory made for it alone — its HOME, its TMPDIR, an
  agent CLI's configuration home — and removed with all it holds when it ends; a run's rooms
  under one base, cleared by the next leg after a kill.
- ``keys``: the model key a runtime's CLI would be given, held for omg's proxy instead (its
  API and variables: ``HeldKey``), and the CLI's environment without it or pointed at the
  proxy with an execution's placeholder.
- ``limits`` (pure): a provider's usage or rate limit told from an agent's failure, its reset
  kept as the provider's words — any runtime maps its errors here.
- ``matcher``: a success check's regex, searched in a child under a time limit.
- ``replycheck``: a structured reply checked against an output_schema whose check is not linear
  in the reply, in a child under a time limit.
- ``shell``: a node's ``run:`` under ``sh -c`` (a Runner, no agent runtime).
- ``claude/``: ``runner`` builds argv and runs a session, ``reply`` says what its reply means,
  ``stream`` reads its stream while it runs (API retries, when to give up), ``transcript``
  where the CLI keeps a session and what steps it holds, ``rehearsal`` how it is pointed at
  the stub model, ``config`` its configuration directory in an execution's room (the user's
  login file carried in when no key variable is set) and the setting sources it may load,
  ``prices`` (pure) what an answer costs per model, the pinned CLI's own price table and rule,
  ``keys`` the key omg's proxy holds for it and the CLI pointed at the proxy.
- ``codex/``: ``runner`` builds ``codex exec --json`` argv (omg's ``-c`` provider flags when a
  base URL is set for it, ``--sandbox`` from ``permission_mode``) and runs a thread,
  ``events`` folds its JSON lines (thread, agent messages, usage, errors; the refused-key
  watch), ``reply`` maps how it ended onto the closed causes with hints, ``rollout`` where
  codex keeps a thread (its home's ``sessions/``), its cumulative tokens and steps, ``cost``
  prices tokens from the graph's ``prices:``, ``rehearsal`` how it is pointed at the stub
  model's Responses API, ``config`` its home in an execution's room and the flags that keep
  it there (no ``config.toml``, its keys out of the agent's commands), ``keys`` the key omg's
  proxy holds for it and codex pointed at the proxy (its provider's ``base_url``).

Nothing outside a runtime's folder knows its specifics; what lint knows of it (the keys it
refuses, whether it prices by tokens, its advisories) is declared in ``omg/runtimes.py``.
"""

from __future__ import annotations

from omg.runners.base import AgentRuntime, Invocation, Output, Runner, Step, is_env_failure
from omg.runners.process import tail

__all__ = [
    "AgentRuntime",
    "Invocation",
    "Output",
    "Runner",
    "Step",
    "is_env_failure",
    "tail",
]
