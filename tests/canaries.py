"""Secret canaries: distinctive random values planted in every secret omg may hold, and the
searches that prove none of them reached a file, a commit, a comment or a command line."""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

#: The variables a canary is planted in (the graph-marked secret input is planted apart).
PLANTED = (
    "GITHUB_TOKEN",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OMG_GIT_TOKEN",
    "MY_SERVICE_PASSWORD",
    "DEPLOY_URL",  # named by the graph's secrets: list, though its name says nothing
)


def canary(tag: str) -> str:
    """A value no run could print by chance: a tag and 96 random bits."""
    return f"cnry{tag}{secrets.token_hex(12)}"


def plant(*names: str) -> dict[str, str]:
    return {name: canary(name.lower().replace("_", "")[:6]) for name in names}


#: A piece of a canary this long is a leak too (a report cuts a long detail short).
PIECE = 16


def forms(value: str) -> dict[str, bytes]:
    """The value as is, every piece of it ``PIECE`` long, and base64'd at each byte alignment
    (the stable middle part) as it would be inside an ``Authorization: Basic`` header."""
    out = {"raw": value.encode()}
    for at in range(len(value) - PIECE + 1):
        out[f"piece {at}"] = value[at : at + PIECE].encode()
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + value.encode())
        whole = (shift + len(value)) // 3 * 4
        out[f"base64+{shift}"] = text[4 if shift else 0 : whole]
    return out


@dataclass
class Search:
    """Every place searched, and every canary found (a leak) with where."""

    canaries: Mapping[str, str]
    places: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)

    def bytes(self, where: str, data: bytes) -> None:
        self.places.append(where)
        for name, value in self.canaries.items():
            found = [form for form, needle in forms(value).items() if needle in data]
            if found:
                self.leaks.append(f"{name} ({', '.join(found[:3])}) in {where}")

    def text(self, where: str, text: str) -> None:
        self.bytes(where, text.encode())

    def tree(self, root: Path, label: str = "") -> None:
        """Every file under ``root``, dotfiles and lock files included."""
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            self.bytes(f"{label}{path.relative_to(root)}", path.read_bytes())

    def git(self, repo_path: Path, label: str) -> None:
        """Every ref, every commit reachable from one (message, author), every tree and blob."""
        repo = pygit2.Repository(str(repo_path))
        seen: set[str] = set()
        for ref in repo.references:
            self.text(f"{label} ref name {ref}", ref)
            target = repo.references[ref].peel(pygit2.Commit)
            for commit in repo.walk(target.id):
                if str(commit.id) in seen:
                    continue
                seen.add(str(commit.id))
                self.bytes(f"{label} commit {str(commit.id)[:10]} ({ref})", commit.read_raw())
                self._tree(repo, commit.tree, f"{label} {str(commit.id)[:10]}:", seen)

    def _tree(self, repo: pygit2.Repository, tree: pygit2.Tree, where: str, seen: set[str]) -> None:
        for entry in tree:
            oid = str(entry.id)
            if oid in seen:
                continue
            seen.add(oid)
            obj = repo[entry.id]
            if isinstance(obj, pygit2.Tree):
                self._tree(repo, obj, f"{where}{entry.name}/", seen)
            elif isinstance(obj, pygit2.Blob):
                self.bytes(f"{where}{entry.name}", obj.data)

    def cmdlines(self, label: str = "/proc") -> None:
        """Every process's command line on this machine, now."""
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                data = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            self.bytes(f"{label}/{pid}/cmdline", data)

    def files(self, paths: Iterable[Path]) -> None:
        for path in paths:
            self.bytes(str(path), path.read_bytes())

    def report(self) -> str:
        return f"{len(self.leaks)} leak(s) in {len(self.places)} places: " + "; ".join(self.leaks)
