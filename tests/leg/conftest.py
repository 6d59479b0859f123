"""Fixtures for the one-leg tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import ScriptedClaude


@pytest.fixture
def claude(tmp_path: Path) -> ScriptedClaude:
    """A scripted stand-in for the claude CLI; point omg at it with ``claude.env()``."""
    return ScriptedClaude(tmp_path / "claude-bin")
