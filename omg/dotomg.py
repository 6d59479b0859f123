"""The .omg directory: where omg keeps runs and worktrees, made to ignore itself in git."""

from __future__ import annotations

from pathlib import Path

NAME = ".omg"


def ensure_ignored(omg_dir: Path) -> None:
    """``<omg_dir>/.gitignore`` holding ``*`` (as pytest's cache does), so nothing omg keeps
    there ever shows in the user's ``git status``."""
    ignore = omg_dir / ".gitignore"
    if not ignore.exists():
        omg_dir.mkdir(parents=True, exist_ok=True)
        ignore.write_text("*\n")
