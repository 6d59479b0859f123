"""The error hierarchy: one base, each kind a refusal or a usage error (cli/exits maps codes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: What kind of "no" an error is; the CLI maps it to an exit code (omg/cli/exits.py).
Refusal = Literal["usage", "refused"]
#: The next step an error points at; the CLI words it from its one table (omg/cli/next.py).
NextStep = Literal["decide", "retry_failed", "resume", "wait", "status"]


@dataclass(frozen=True)
class Hint:
    """Where an error points the user next: a step of the one "what next" table."""

    step: NextStep
    run_id: str
    gate: str | None = None


class OmgError(Exception):
    """An error the user can act on; ``str(e)`` is printed as-is, then its ``hint`` if any."""

    kind: Refusal = "refused"

    def __init__(self, message: str, *, hint: Hint | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class UsageError(OmgError):
    """The command line itself is wrong (a flag combination, a missing argument)."""

    kind: Refusal = "usage"


class GraphError(OmgError):
    """A graph file is unreadable or invalid; nothing ran."""


class InputError(OmgError):
    """A run's inputs do not match what the graph declares; nothing ran."""


class StateError(OmgError):
    """A run directory is missing, damaged, locked or conflicting; nothing ran."""


class Unreadable(StateError):
    """A one-file record on a ref of its own (a spend book, a wait, the lease) holds no file
    omg can read: none, a directory, a submodule, one past its size; ``problem`` says which."""

    def __init__(self, ref: str, commit: str, problem: str) -> None:
        super().__init__(f"{ref} {problem}")
        self.ref, self.commit, self.problem = ref, commit, problem


class RunFailed(StateError):
    """The run failed for good: a resume without --retry-failed has nothing to run."""


class GitError(OmgError):
    """A git operation failed or the run branch moved on; translated at the omg.git edge."""


class MovedOn(GitError):
    """Compare-and-swap lost: another leg advanced the run branch first; nothing was spent."""


class Held(MovedOn):
    """Another leg, alive on this machine or another, holds the run's lease; nothing was spent."""


class GitHubError(OmgError):
    """GitHub's REST API refused or kept failing a request; what omg recorded is kept."""


class GitHubForbidden(GitHubError):
    """GitHub answered 403 (no rate limit): the job's token lacks a permission the call needs."""
