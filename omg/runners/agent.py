"""The agent base: what every agent runtime's runner shares — its CLI found, its version asked
once, and one session spawned — so a runtime's folder holds only what is its own."""

from __future__ import annotations

import os
import shutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar

from omg.runners import process
from omg.runners.base import Invocation, Output
from omg.runners.process import ProcResult, Spawner, SpawnRequest

#: Each CLI binary's version, asked once per path.
_VERSIONS: dict[str, str] = {}


class AgentRunner(ABC):
    """The base of each agent runtime's runner (``runners/<runtime>/runner.py``).

    Its binary is the one it was made with, else the runtime's ``OMG_<RUNTIME>_BIN``, else its
    name on the parent's PATH. A subclass declares what the seam asks of an agent runtime
    (``base.AgentRuntime``), its argv and its run, and says in its own words why a binary
    cannot be used (``unusable``, ``missing``) and which version its CLI reported.
    """

    #: The runtime's name, as a graph's ``runtime:`` gives it.
    name: ClassVar[str]
    #: The variable naming the CLI binary to run.
    bin_env: ClassVar[str]
    #: How to install the CLI, for every message that says it cannot be started.
    install_hint: ClassVar[str]

    def __init__(self, binary: str | None = None, parent_env: Mapping[str, str] | None = None):
        self._binary = binary
        self._parent_env = parent_env

    # -- binary ----------------------------------------------------------------------------
    def resolve_binary(self) -> tuple[str | None, str]:
        """(path of the CLI binary, "") or (None, why it could not be found)."""
        parent = os.environ if self._parent_env is None else self._parent_env
        if self._binary is not None:
            wanted, source = self._binary, f"the configured {self.name} binary"
        elif parent.get(self.bin_env):
            wanted, source = parent[self.bin_env], self.bin_env
        else:
            wanted, source = self.name, "PATH"
        if os.sep in wanted:
            path = os.path.abspath(wanted)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path, ""
            return None, self.unusable(wanted, source)
        found = shutil.which(wanted, path=parent.get("PATH", os.defpath))
        if found is not None:
            return os.path.abspath(found), ""
        return None, self.missing(wanted, source)

    @abstractmethod
    def unusable(self, wanted: str, source: str) -> str:
        """Why the path ``source`` names (``wanted``) cannot be run."""

    @abstractmethod
    def missing(self, wanted: str, source: str) -> str:
        """Why ``wanted`` was not found on PATH (``source`` named it)."""

    def version(self) -> str:
        """The CLI's version number, asked once per binary; "" when it does not say one.
        Asked through the process chokepoint, not the node's spawner: it is omg's question,
        not the node's work."""
        binary, _ = self.resolve_binary()
        if binary is None:
            return ""
        if binary not in _VERSIONS:
            env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/")}
            asked = SpawnRequest((binary, "--version"), cwd=Path.cwd(), env=env, timeout_s=10)
            _VERSIONS[binary] = self.version_of(process.spawn(asked).stdout)
        return _VERSIONS[binary]

    @abstractmethod
    def version_of(self, said: str) -> str:
        """The version number in what ``<bin> --version`` printed, or ""."""

    # -- argv and run ----------------------------------------------------------------------
    @abstractmethod
    def argv(self, inv: Invocation) -> list[str]:
        """The child's argv, as a dry run shows it."""

    @abstractmethod
    def run(self, inv: Invocation, spawn: Spawner) -> Output:
        """Run one attempt and say what its reply means."""

    def session(
        self,
        inv: Invocation,
        spawn: Spawner,
        give_up: Callable[[str], str | None],
        activity: Callable[[], object] | None = None,
    ) -> ProcResult:
        """One session of the CLI through ``spawn``: the prompt on stdin, the node's idle
        watchdog, ``give_up`` watching its stdout, and every process it started reaped when it
        ends (an agent's tools run in sessions of their own: none outlives it)."""
        return spawn(
            SpawnRequest(
                tuple(self.argv(inv)),
                cwd=inv.cwd,
                env=inv.env,
                timeout_s=inv.timeout_s,
                idle_s=inv.node.idle_timeout_s,
                stdin=inv.text,
                reap=True,
                give_up=give_up,
                activity=activity,
            )
        )

    def not_started(self, binary: str, res: ProcResult) -> Output:
        """The reply of a session whose CLI could not be started."""
        detail = f"could not start {self.name} ({binary}): {res.spawn_error}; {self.install_hint}"
        return Output(None, "", error="run_error", detail=detail, duration_s=res.duration_s)
