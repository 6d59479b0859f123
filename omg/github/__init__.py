"""GitHub: the one package that reads GITHUB_* variables, and speaks GitHub's formats."""

from omg.github.annotations import escape_data, escape_property, workflow_command
from omg.github.env import actor, git_tokens, server_host

__all__ = [
    "actor",
    "escape_data",
    "escape_property",
    "git_tokens",
    "server_host",
    "workflow_command",
]
