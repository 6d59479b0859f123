"""The error hierarchy: one base, each kind with its exit code."""

from __future__ import annotations


class OmgError(Exception):
    """An error the user can act on; ``str(e)`` is printed as-is."""

    exit_code = 3


class UsageError(OmgError):
    """The command line itself is wrong (a flag combination, a missing argument)."""

    exit_code = 2


class GraphError(OmgError):
    """A graph file is unreadable or invalid; nothing ran."""

    exit_code = 3


class InputError(OmgError):
    """A run's inputs do not match what the graph declares; nothing ran."""

    exit_code = 3


class StateError(OmgError):
    """A run directory is missing, damaged, locked or conflicting; nothing ran."""

    exit_code = 3


class GitError(OmgError):
    """A git operation failed or the run branch moved on; translated at the omg.git edge."""

    exit_code = 3
