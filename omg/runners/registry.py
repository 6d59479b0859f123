"""The runtime registry: the one place that names each runtime a node can ask for."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from omg.runners.base import AgentRuntime, Runner
from omg.runtimes import Runtime

#: Which runtime speaks each API the stub model serves (what a rule's ``when.runtime`` names).
STUB_APIS: dict[str, Runtime] = {"messages": "claude", "responses": "codex"}


def agents() -> dict[str, AgentRuntime]:
    """One agent runtime per name an agent node's ``runtime:`` may take in this omg (each a
    name ``omg/runtimes.py`` declares, with its lint rules)."""
    from omg.runners.claude.runner import ClaudeRunner
    from omg.runners.codex.runner import CodexRunner

    made: dict[Runtime, AgentRuntime] = {"claude": ClaudeRunner(), "codex": CodexRunner()}
    return {name: runtime for name, runtime in made.items()}  # keyed by declared names only


def key_rules() -> tuple[Callable[[Mapping[str, str]], dict[str, str]], ...]:
    """Each agent runtime's key rule — its runner's ``keyless``, from its ``keys`` module, which
    loads without the runner (``tests/runners/test_registry.py`` holds the two lists equal)."""
    from omg.runners.claude.keys import keyless as claude
    from omg.runners.codex.keys import keyless as codex

    return (claude, codex)


def default_runners() -> dict[str, Runner]:
    """One runner per kind a node can name (``shell``, and each agent runtime)."""
    from omg.runners.shell import ShellRunner

    return {"shell": ShellRunner(), **agents()}


def agent_runtimes() -> tuple[str, ...]:
    """The names an agent node's ``runtime:`` may take and this omg can run."""
    return tuple(sorted(agents()))


def rehearsal_env(parent: Mapping[str, str], url: str) -> dict[str, str]:
    """``parent`` as every child of a rehearsed leg sees it: each runtime's model pointed at
    the stub at ``url``."""
    env = dict(parent)
    for runtime in agents().values():
        env = runtime.rehearsal_env(env, url)
    return env


def pin_hint(runtime: str | None = None) -> tuple[str, str]:
    """An agent runtime whose CLI version the events record (``runtime``, else the first
    that has one), and how to pin it."""
    for name, found in agents().items():
        if found.pin_hint and runtime in (None, name):
            return name, found.pin_hint
    return "", ""


def stub_endpoint(url: str) -> dict[str, str]:
    """What points every runtime at the stub model at ``url``."""
    out: dict[str, str] = {}
    for runtime in agents().values():
        out.update(runtime.endpoint(url))
    return out
