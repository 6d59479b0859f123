"""The user's codex home (``omg.runners.codex.config.users_home``), where a stored login is
carried from and rollouts are found: ``$CODEX_HOME``, else ``~/.codex`` — a table test."""

from __future__ import annotations

from pathlib import Path

import pytest

from omg.runners.codex.config import users_home
from omg.runners.codex.rollout import path


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({"CODEX_HOME": "/c", "HOME": "/h"}, Path("/c")),
        ({"CODEX_HOME": "", "HOME": "/h"}, Path("/h/.codex")),  # empty: unset
        ({"HOME": "/h"}, Path("/h/.codex")),
        ({}, Path("/.codex")),
    ],
)
def test_codex_home_is_codex_home_else_the_users(env: dict[str, str], want: Path) -> None:
    assert users_home(env) == want
    thread = "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    found = path(env, thread)
    assert found is not None and found.is_relative_to(want / "sessions")
