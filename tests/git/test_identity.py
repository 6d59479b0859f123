"""The git configuration a room's HOME gets: the user's identity alone, quoted so git reads it
back exactly, from ~/.gitconfig over the XDG file; nothing when there is none."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from omg.git.identity import room_gitconfig


def read_back(text: str, tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "room.gitconfig"
    path.write_text(text)
    out = subprocess.run(
        ["git", "config", "--file", str(path), "--list"], capture_output=True, text=True, check=True
    ).stdout
    return dict(line.split("=", 1) for line in out.splitlines())


@pytest.mark.parametrize(
    ("global_", "xdg", "want"),
    [
        ('[user]\n\tname = Ada\n\temail = a@x\n[alias]\n\tst = !rm -rf /\n', None,
         {"user.email": "a@x", "user.name": "Ada"}),
        ('[user]\n\tname = "A \\"Q\\" \\\\ B"\n', None, {"user.name": 'A "Q" \\ B'}),
        (None, "[user]\n\temail = xdg@x\n\tname = X\n", {"user.email": "xdg@x", "user.name": "X"}),
        ("[user]\n\tname = G\n", "[user]\n\tname = X\n\temail = xdg@x\n",
         {"user.email": "xdg@x", "user.name": "G"}),  # ~/.gitconfig wins, key by key
        ("[user]\n\tname = bad\\nline\n\temail = a@x\n", None, {"user.email": "a@x"}),
        ("[core]\n\thooksPath = /x\n", None, {}),
        (None, None, {}),
    ],
)  # fmt: skip
def test_a_room_gets_the_users_identity_and_nothing_else(
    tmp_path: Path, global_: str | None, xdg: str | None, want: dict[str, str]
) -> None:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    if global_ is not None:
        (home / ".gitconfig").write_text(global_)
    if xdg is not None:
        (home / ".config" / "git" / "config").write_text(xdg)
    text = room_gitconfig({"HOME": str(home)})
    assert (read_back(text, tmp_path) if text else {}) == want
    assert not (home / ".gitconfig").exists() or global_ is not None  # nothing written there
