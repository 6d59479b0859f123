"""Child environments: the minimal set of variables each kind of child may see."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

#: Always passed through when set.
BASE = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "TERM")
#: Prefixes passed only to the claude runtime (its endpoint, auth and settings).
CLAUDE_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_", "CLAUDE_CONFIG_DIR")
# Secrets (GITHUB_TOKEN, ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN, OPENAI_API_KEY) reach a
# shell node or verify command only when its ``env:`` names them: this is an allow-list.


def child_env(
    parent: Mapping[str, str],
    declared: Iterable[tuple[str, str | None]] = (),
    *,
    runtime: str = "shell",
) -> dict[str, str]:
    """The environment for one child.

    ``declared`` is the node's ``env:``: a name with None passes the parent's value through,
    a name with a value sets it. ``runtime`` "claude" adds the model endpoint and auth variables.
    """
    env = {k: parent[k] for k in BASE if k in parent}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if runtime == "claude":
        for k, v in parent.items():
            if k.startswith(CLAUDE_PREFIXES):
                env[k] = v
    for name, value in declared:
        if value is not None:
            env[name] = value
        elif name in parent:
            env[name] = parent[name]
    return env
