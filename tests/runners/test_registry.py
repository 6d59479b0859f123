"""The runtime registry: it names exactly the runtimes the schema offers (less the reserved
ones), each runner declares its own environment, and a rehearsal withholds real credentials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from omg.graph.schema import SCHEMA_FILE
from omg.runners.base import AgentRuntime, Runner
from omg.runners.process import child_env
from omg.runners.registry import (
    agent_runtimes,
    agents,
    default_runners,
    key_rules,
    rehearsal_env,
    stub_endpoint,
)
from omg.runtimes import DEFAULT_RUNTIME, RESERVED_RUNTIMES, RUNTIMES

PARENT = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "ANTHROPIC_API_KEY": "sk-ant-real-key",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-real",
    "MY_DEPLOY_TOKEN": "ghs_real",
}


def _runtime_enums(node: Any) -> list[list[str]]:
    """Every ``runtime`` property's enum in the schema."""
    found: list[list[str]] = []
    if isinstance(node, dict):
        prop = node.get("properties", {}).get("runtime")
        if isinstance(prop, dict) and "enum" in prop:
            found.append(prop["enum"])
        for value in node.values():
            found += _runtime_enums(value)
    elif isinstance(node, list):
        for value in node:
            found += _runtime_enums(value)
    return found


def test_the_schema_the_model_and_the_registry_name_the_same_runtimes() -> None:
    enums = _runtime_enums(json.loads(Path(SCHEMA_FILE).read_text()))
    assert enums, "the schema has no runtime enum"
    assert all(sorted(e) == sorted(RUNTIMES) for e in enums)
    assert sorted(agent_runtimes()) == sorted(set(RUNTIMES) - set(RESERVED_RUNTIMES))
    assert DEFAULT_RUNTIME in agent_runtimes()
    assert "shell" in default_runners()


def _members(seam: type) -> set[str]:
    """What a Protocol of the seam declares itself: its attributes and methods."""
    methods = [k for k, v in vars(seam).items() if callable(v) and not k.startswith("_")]
    return {*seam.__annotations__, *methods}


def test_every_registered_runner_declares_the_whole_seam() -> None:
    assert _members(Runner) == {"argv", "run", "env_prefixes"}
    assert {"transcript", "rehearsal_env", "names_sessions", "furnish"} <= _members(AgentRuntime)
    for name, runner in default_runners().items():
        missing = [m for m in _members(Runner) if not hasattr(runner, m)]
        assert not missing, f"runner {name!r} lacks {missing}"
    for name, runtime in agents().items():
        missing = [m for m in _members(AgentRuntime) if not hasattr(runtime, m)]
        assert not missing, f"agent runtime {name!r} lacks {missing}"


def test_the_shell_runner_is_no_agent_runtime_and_stubs_none_of_its_members() -> None:
    shell = default_runners()["shell"]
    stubs = sorted(m for m in _members(AgentRuntime) if hasattr(shell, m))
    assert stubs == [], f"ShellRunner declares what only an agent runtime has: {stubs}"
    assert "shell" not in agents()


def test_a_model_key_reaches_only_the_runtime_that_declares_it() -> None:
    runners = default_runners()
    claude = child_env(PARENT, prefixes=runners["claude"].env_prefixes)
    shell = child_env(PARENT, prefixes=runners["shell"].env_prefixes)
    assert claude["ANTHROPIC_API_KEY"] == "sk-ant-real-key"
    assert claude["CLAUDE_CODE_OAUTH_TOKEN"] == "oauth-real"
    assert "MY_DEPLOY_TOKEN" not in claude
    assert shell == {"PATH": "/usr/bin:/bin", "HOME": "/home/u"}
    named = child_env(PARENT, [("ANTHROPIC_API_KEY", None)])
    assert named["ANTHROPIC_API_KEY"] == "sk-ant-real-key"  # a node's env: may still ask


def test_a_rehearsal_gives_no_runtime_a_real_credential() -> None:
    env = rehearsal_env({**PARENT, "CLAUDE_CONFIG_DIR": "/u/.claude"}, "http://127.0.0.1:9")
    assert "sk-ant-real-key" not in env.values() and "oauth-real" not in env.values()
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert "CLAUDE_CONFIG_DIR" not in env  # the user's is withheld; each room has its own
    assert env["MY_DEPLOY_TOKEN"] == "ghs_real"  # not a runtime's: child_env still decides
    assert stub_endpoint("http://x") == {
        "ANTHROPIC_BASE_URL": "http://x",
        "ANTHROPIC_API_KEY": env["ANTHROPIC_API_KEY"],
        "OMG_CODEX_BASE_URL": "http://x/v1",  # codex: omg's provider at the stub's Responses API
        "OPENAI_API_KEY": env["OPENAI_API_KEY"],
    }


def test_every_runtimes_key_rules_strip_what_its_runner_strips() -> None:
    """The key rules a leg of shell nodes uses without making a runner are each runner's own:
    the same functions, in effect the same environment."""
    from omg.leg.keys import keyless

    assert {agent.keyless for agent in agents().values()} == set(key_rules())

    env = {**PARENT, "ANTHROPIC_AUTH_TOKEN": "t", "OPENAI_API_KEY": "o", "CODEX_API_KEY": "c"}
    by_rules = keyless(env, key_rules())
    assert by_rules == keyless(env, [agent.keyless for agent in agents().values()])
    assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY"} & set(by_rules)
    assert by_rules["MY_DEPLOY_TOKEN"] == "ghs_real"  # not a model key
