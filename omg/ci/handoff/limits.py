"""Pure: the bounds a hand-off must keep — sizes, counts, the paths a run directory may hold,
the names a lane's tree may use — and GitHub's limits on the texts it asks to publish."""

from __future__ import annotations

import re
from dataclasses import dataclass

from omg.ci.handoff.manifest import Publish
from omg.github.commitstatus import LIMIT as STATUS_LIMIT

MiB = 1 << 20

#: GitHub refuses an issue comment body longer than this (characters).
COMMENT_LIMIT = 65536
#: The most inputs one workflow dispatch may carry, and their characters in all.
DISPATCH_INPUTS = 25
DISPATCH_CHARS = 65535
#: A note's fields as JSON, at most.
NOTE_BYTES = 64 * 1024

#: Git's modes: a file, an executable file, a directory, a symbolic link, a submodule.
BLOB, EXECUTABLE, TREE, LINK, GITLINK = 0o100644, 0o100755, 0o040000, 0o120000, 0o160000

_NAME = r"[A-Za-z0-9][A-Za-z0-9._+-]{0,199}"
#: Every file a run directory may hold, by its path in the run branch's tree.
RUN_FILES = re.compile(
    rf"state\.json|events\.jsonl|events/\d{{10}}\.jsonl"
    rf"|(?:artifacts|failed|feedback)/{_NAME}\.out|sessions/{_NAME}\.jsonl"
)
#: The folders a run directory may hold.
RUN_DIRS = frozenset({"events", "artifacts", "failed", "feedback", "sessions"})


@dataclass(frozen=True)
class Limits:
    """How large a hand-off may be: the pack file, its objects (count, one, all inflated),
    one file of a tree, and the entries of the new trees."""

    pack_bytes: int = 256 * MiB
    objects: int = 200_000
    object_bytes: int = 64 * MiB
    total_bytes: int = 1024 * MiB
    file_bytes: int = 64 * MiB
    entries: int = 200_000
    manifest_bytes: int = 4 * MiB


def run_path_problem(path: str, mode: int) -> str | None:
    """Why a run branch's tree may not hold ``path`` with ``mode`` (None: it may)."""
    if mode == LINK:
        return "is a symbolic link; a run directory holds none"
    if mode == GITLINK:
        return "is a submodule; a run directory holds none"
    if mode == TREE:
        return None if path in RUN_DIRS else "is a folder a run directory does not have"
    if mode not in (BLOB, EXECUTABLE):
        return f"has git mode {mode:o}, which is no file omg writes"
    if RUN_FILES.fullmatch(path) is None:
        return (
            "is no file a run directory holds (state.json, the event log, artifacts/, "
            "failed/, feedback/, sessions/)"
        )
    return None


def name_problem(path: str) -> str | None:
    """Why a tree may not name ``path`` (any tree: a lane's too), None when it may: no empty,
    ``.`` or ``..`` part, no ``.git`` (in any case), no control character, none too long."""
    if not path or len(path) > 4096:
        return "has a path that is empty or longer than 4096 characters"
    name = path.rsplit("/", 1)[-1]
    if name in ("", ".", "..") or "\\" in name:
        return "has a name git never writes ('', '.', '..' or one holding a backslash)"
    if name.lower().rstrip(". ") == ".git" or name.lower().startswith(".git~"):
        return "is named .git: a checkout of it would write into the repository itself"
    if len(name.encode("utf-8", "surrogateescape")) > 255:
        return "has a name longer than 255 bytes"
    if any(ord(c) < 32 or c == "\x7f" for c in name) or "\udc80" <= max(name) <= "\udcff":
        return "has a name with a control character or bytes that are not UTF-8"
    return None


def text_problems(publish: Publish) -> list[tuple[str, str]]:
    """Each text the leg wants published that GitHub would refuse: (what, why)."""
    out: list[tuple[str, str]] = []
    comment = publish["comment"]
    if comment is not None and len(comment["body"]) > COMMENT_LIMIT:
        out.append(("comment", f"is {len(comment['body']):,} characters, more than GitHub's "
                    f"{COMMENT_LIMIT:,}"))  # fmt: skip
    status = publish["status"]
    if status is not None and len(status["description"]) > STATUS_LIMIT:
        out.append(("status", f"has a description of {len(status['description'])} characters, "
                    f"more than GitHub's {STATUS_LIMIT}"))  # fmt: skip
    dispatch = publish["dispatch"]
    if dispatch is not None:
        inputs = dispatch["inputs"]
        chars = sum(len(k) + len(v) for k, v in inputs.items())
        if len(inputs) > DISPATCH_INPUTS or chars > DISPATCH_CHARS:
            out.append(("dispatch", f"has {len(inputs)} inputs of {chars:,} characters; GitHub "
                        f"takes {DISPATCH_INPUTS} at most, of {DISPATCH_CHARS:,}"))  # fmt: skip
    for note in publish["notes"]:
        size = len(repr(note["fields"]).encode())
        if size > NOTE_BYTES:
            out.append((f"note {note['id']}", f"has fields of {size:,} bytes, more than "
                        f"{NOTE_BYTES:,}"))  # fmt: skip
    return out
