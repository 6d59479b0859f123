"""Fixtures for the runner tests: a stub claude executable, invocations, a recording spawner."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from omg.graph.model import Node
from omg.runners.base import Invocation
from omg.runners.process import ProcResult, SpawnRequest, spawn

STUB_SOURCE = Path(__file__).resolve().parent / "stub_claude.py"
#: The real interpreter's directory first, so the stub's `#!/usr/bin/env python3` needs no shim.
TEST_PATH = os.pathsep.join(
    [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
)


class StubClaude:
    """A stub `claude` executable in its own directory, scripted through script.json."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.bin = self.dir / "claude"
        shutil.copyfile(STUB_SOURCE, self.bin)
        self.bin.chmod(0o755)

    def script(self, **kw: Any) -> None:
        (self.dir / "script.json").write_text(json.dumps(kw))

    def calls(self) -> list[dict[str, Any]]:
        path = self.dir / "calls.json"
        return json.loads(path.read_text()) if path.exists() else []

    def last(self) -> dict[str, Any]:
        calls = self.calls()
        assert calls, "the stub claude was never run"
        return calls[-1]


@pytest.fixture
def claude_stub(tmp_path: Path) -> StubClaude:
    return StubClaude(tmp_path / "stubbin")


@pytest.fixture
def base_env() -> dict[str, str]:
    return {"PATH": TEST_PATH, "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/root")}


MakeInv = Callable[..., Invocation]


@pytest.fixture
def make_inv(tmp_path: Path, base_env: dict[str, str]) -> MakeInv:
    """An Invocation with test defaults; node fields go in ``node=dict(...)``."""

    def make(
        text: str = "do the thing",
        *,
        node: Mapping[str, Any] | None = None,
        kind: str = "agent",
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout_s: float = 30.0,
        session_id: str | None = None,
        resume_session: str | None = None,
        budget_usd: float | None = None,
    ) -> Invocation:
        work = cwd or tmp_path / "work"
        work.mkdir(parents=True, exist_ok=True)
        n = Node(id="n1", kind=kind, **dict(node or {}))  # type: ignore[arg-type]
        return Invocation(
            node=n,
            text=text,
            cwd=work,
            env=dict(base_env if env is None else env),
            timeout_s=timeout_s,
            session_id=session_id,
            resume_session=resume_session,
            budget_usd=budget_usd,
        )

    return make


class RecordingSpawn:
    """The real omg.proc.spawn, remembering how it was called."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def __call__(self, req: SpawnRequest) -> ProcResult:
        call = {f.name: getattr(req, f.name) for f in fields(req)}
        self.calls.append({**call, "argv": list(req.argv), "env": dict(req.env)})
        return spawn(req)


@pytest.fixture
def rec_spawn() -> RecordingSpawn:
    return RecordingSpawn()


def _alive(pid: int) -> bool:
    """True while ``pid`` is a live process (a zombie awaiting its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return not Path("/proc").is_dir()  # no procfs: trust kill(0)
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _gone_soon(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return not _alive(pid)


@pytest.fixture
def process_gone() -> Callable[[int], bool]:
    """Waits briefly for a pid to die; True once it is gone (or only a zombie)."""
    return _gone_soon
