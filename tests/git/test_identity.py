"""The git configuration a room's HOME gets: the user's identity alone, quoted so git reads it
back exactly, from ~/.gitconfig over the XDG file; nothing when there is none."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omg.git.identity import plain_user, room_gitconfig


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


def libgit2_user(data: bytes) -> dict[str, str]:
    """``user.name`` and ``user.email`` as libgit2 reads ``data`` from a file (none: {})."""
    import pygit2

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config"
        path.write_bytes(data)
        try:
            config = pygit2.Config(str(path))
        except pygit2.GitError:
            return {}
        out: dict[str, str] = {}
        for key in ("name", "email"):
            try:
                out[key] = str(config[f"user.{key}"])
            except (KeyError, pygit2.GitError):
                continue
        return out


@pytest.mark.parametrize(
    "text",
    [
        "[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n",
        "# mine\n[User]\n  Name=Ada\n; old\n[core]\n\teditor = vim -f\n[user]\n\tEMAIL = a@x\n",
        "[alias]\n\tlg = log --pretty=format:'%h %s'\n\tco = checkout\n[user]\n\tname = José\n",
        "[user]\n\tname =\n\temail = a@x   \n",
        "",
    ],
)
def test_a_plain_config_is_read_as_libgit2_reads_it_without_pygit2(text: str) -> None:
    plain = plain_user(text.encode())
    assert plain is not None, text
    assert plain == libgit2_user(text.encode())


@pytest.mark.parametrize(
    "text",
    [
        '[user]\n\tname = "Ada"\n',  # quoted
        "[user]\n\tname = A\\\n  B\n",  # continued
        "[user]\n\tname = a\\tb\n",  # an escape
        "[include]\n\tpath = other\n[user]\n\tname = A\n",  # an include
        '[includeIf "gitdir:~/w/"]\n\tpath = w\n',
        '[user "x"]\n\tname = A\n',  # a subsection
        "[user.x]\n\tname = A\n",  # the old subsection form
        "[user]\n\tname = A # me\n",  # a comment after a value
        "[user]\n\tname = A  B\n",  # a run of blanks inside a value
        "[user]\n\tname = A\tB\n",
        "[user]\n\tname = A\n\tname = B\n",  # a key twice
        "[user]\n\tname\n",  # a key without a value
        "name = A\n",  # outside any section
        "[user] name = A\n",  # a key on the header's line
        "[user]\r\n\tname = A\r\n",
        "\ufeff[user]\n\tname = A\n",
        "[user]\n\tname = A\x0bB\n",
        "[user]\n\tna_me = A\n",
    ],
)
def test_anything_but_a_plain_config_is_left_to_libgit2(text: str) -> None:
    assert plain_user(text.encode()) is None
    assert plain_user(b"[user]\n\tname = \xff\n") is None  # not UTF-8


LINES = st.sampled_from(
    [
        "[user]", "[User]", "[core]", "[alias]", "[include]", '[user "x"]', "[user.x]", "[]",
        "name = Ada", "email = a@x", "Name=Bo", "  email =  c@d  ", "name =", "name", "x-y = 1",
        "name = A B", "name = A  B", "name = a#b", "name = a;b", 'name = "q"', "name = a\\",
        "name = é", "# name = Z", "; c", "", "  ", "\tname = T", "9x = 1", "path = f",
        "name = A\tB", "[user] name = H", "name = a=b", "email = 'q'",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=8))
def test_whatever_plain_user_reads_libgit2_reads_the_same(lines: list[str]) -> None:
    data = "\n".join(lines).encode()
    plain = plain_user(data)
    assert plain is None or plain == libgit2_user(data)
