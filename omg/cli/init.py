"""`omg init [PATH]`: the workflows a repository needs (review, resume, lint) and a starter
graph, written once — `uses:` pinned to the omg commit in use — never over a file that differs."""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Literal

from omg.cli import exits
from omg.cli.version import origin
from omg.errors import OmgError, UsageError

#: Where each template goes, repository-relative.
FILES = {
    "omg-review.yml": ".github/workflows/omg-review.yml",
    "omg-resume.yml": ".github/workflows/omg-resume.yml",
    "omg-lint.yml": ".github/workflows/omg-lint.yml",
    "review-loop.yaml": "graphs/review-loop.yaml",
    "implement-review.yaml": "graphs/fragments/implement-review.yaml",
}
_PIN = re.compile(r"^([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)@([0-9a-f]{40})$")
#: What `omg init` does with one file: write it (absent), leave it (equal), keep it (differs).
State = Literal["new", "unchanged", "kept"]
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class Pin:
    """The omg action the workflows use: a repository and a full commit."""

    repo: str  # owner/name
    commit: str

    @property
    def uses(self) -> str:
        return f"{self.repo}@{self.commit}"


def pin_of(given: str | None) -> Pin:
    """``--uses OWNER/REPO@COMMIT``, else the commit pip installed omg from (a git install)."""
    if given:
        m = _PIN.match(given.strip())
        if m is None:
            raise UsageError(
                f"--uses {given!r} is not OWNER/REPO@COMMIT with a full 40-character commit: "
                "workflows pin third-party actions by commit"
            )
        return Pin(f"{m.group(1)}/{m.group(2)}", m.group(3))
    found = origin()
    if found is not None and found.repo:
        return Pin(found.repo, found.commit)
    raise UsageError(
        "this omg was not installed from a GitHub commit, so the commit to pin is unknown; "
        "pass it: `omg init --uses OWNER/omg@<40-character commit>`"
    )


def render(name: str, pin: Pin) -> str:
    text = resources.files("omg").joinpath("templates", name).read_text(encoding="utf-8")
    return (
        text.replace("@@USES@@", pin.uses)
        .replace("@@WHAT@@", f"omg's action, pinned by commit ({metadata.version('omg')})")
        .replace("@@GIT@@", f"https://github.com/{pin.repo}@{pin.commit}")
    )


def init(root: Path, uses: str | None, show: str | None = None) -> tuple[str, int]:
    """Write the files under ``root``; the report and the exit code (3 when a file differs)."""
    pin = pin_of(uses)
    if show is not None:
        by_path = {rel: name for name, rel in FILES.items()}
        if show not in by_path:
            raise UsageError(f"--show takes one of: {', '.join(sorted(by_path))}")
        return render(by_path[show], pin), exits.PASSED
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory: `omg init` writes into a repository")
    planned = plan(root, {rel: render(name, pin).encode("utf-8") for name, rel in FILES.items()})
    written = write(root, {rel: text for rel, (state, text) in planned.items() if state == "new"})
    lines, kept = [], []
    for rel, (state, _) in planned.items():
        if state == "unchanged":
            lines.append(f"unchanged  {rel}")
        elif state == "new" and rel in written:
            lines.append(f"wrote      {rel}")
        else:
            kept.append(rel)
            lines.append(f"kept       {rel}: it differs from omg's, so it was not overwritten")
    if kept:
        lines.append("")
        lines.append("To compare yours with omg's (from the repository root):")
        lines += [f"  omg init --uses {pin.uses} --show {rel} | diff -u {rel} -" for rel in kept]
        lines.append("Move a file aside and run `omg init` again to take omg's.")
        return "\n".join(lines), exits.REFUSED
    lines += [
        "",
        "Next: add the repository secret the workflows pass to agent nodes (named in their env:",
        "blocks), commit these files and push; every pull request then runs",
        "graphs/review-loop.yaml.",
    ]
    return "\n".join(lines), exits.PASSED


def plan(root: Path, files: Mapping[str, bytes]) -> dict[str, tuple[State, bytes]]:
    """What becomes of each file (repository-relative path → its bytes), decided before
    anything is written; OmgError naming every path that stands in the way: a link (omg
    writes through none it did not make), a file where a directory goes, or anything but a
    regular file where a file goes."""
    out: dict[str, tuple[State, bytes]] = {}
    blocked: dict[str, str] = {}
    for rel, text in files.items():
        parts = rel.split("/")
        for depth in range(1, len(parts) + 1):
            sub = "/".join(parts[:depth])
            why = _blocks(root / sub, is_dir=depth < len(parts))
            if why:
                blocked.setdefault(sub, why)
                break
            if not (root / sub).exists():
                break
        if not any(rel == b or rel.startswith(b + "/") for b in blocked):
            out[rel] = _state(root / rel, text), text
    if blocked:
        raise OmgError(
            "omg init refused, nothing was written:\n"
            + "\n".join(f"  {rel} {why}" for rel, why in blocked.items())
        )
    return out


def _blocks(path: Path, *, is_dir: bool) -> str | None:
    """Why ``path`` cannot be a directory (``is_dir``) or file omg writes; None when it can."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return (
            "is a symbolic link — omg init writes through no link it did not make (it could "
            "lead out of the repository); replace it with a " + ("directory" if is_dir else "file")
        )
    if is_dir and not stat.S_ISDIR(mode):
        return "is a file where omg init makes a directory — move it aside and run it again"
    if not is_dir and not stat.S_ISREG(mode):
        return "is not a regular file — move it aside and run omg init again"
    return None


def _state(path: Path, text: bytes) -> State:
    """Whether the regular file (or nothing) at ``path`` holds ``text``; its bytes are
    compared, never decoded, and never read past one byte more than ``text``."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return "new"
    except OSError as exc:
        raise OmgError(
            f"omg init refused, nothing was written: cannot read {path}: {exc.strerror or exc}"
        ) from None
    with os.fdopen(fd, "rb") as f:
        return "unchanged" if f.read(len(text) + 1) == text else "kept"


def write(root: Path, files: Mapping[str, bytes]) -> set[str]:
    """Each file written under ``root``, or none where something appeared since the plan:
    made in a private directory (``mkdtemp`` inside ``root``) with O_EXCL and O_NOFOLLOW, then
    linked into place, which never replaces what is there; the paths written."""
    done: set[str] = set()
    try:
        if files:
            _write(root, files, done)
    except OSError as exc:
        wrote = ", ".join(sorted(done)) or "nothing"
        raise OmgError(
            f"omg init could not write into {root}: {exc.strerror or exc} (written: {wrote})"
        ) from None
    return done


def _write(root: Path, files: Mapping[str, bytes], done: set[str]) -> None:
    with _private(root) as (top, scratch):
        for rel, text in files.items():
            *dirs, name = rel.split("/")
            with _directory(top, dirs, rel) as parent:
                fd = os.open(
                    name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=scratch
                )
                try:
                    with os.fdopen(fd, "wb") as f:
                        f.write(text)
                        f.flush()
                        os.fsync(f.fileno())
                    os.link(name, name, src_dir_fd=scratch, dst_dir_fd=parent,
                            follow_symlinks=False)  # fmt: skip
                    done.add(rel)
                except FileExistsError:
                    pass  # made since the plan: it is kept, as any file that differs
                finally:
                    os.unlink(name, dir_fd=scratch)


@contextmanager
def _private(root: Path) -> Iterator[tuple[int, int]]:
    """``root`` and a directory only this process can use, made inside it and removed."""
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    made = tempfile.mkdtemp(prefix=".omg-init-", dir=root)
    try:
        scratch = os.open(made, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        try:
            yield top, scratch
        finally:
            os.close(scratch)
    finally:
        os.rmdir(made)
        os.close(top)


@contextmanager
def _directory(top: int, dirs: list[str], rel: str) -> Iterator[int]:
    """The directory ``dirs`` under ``top``, made where missing, each step refusing a link."""
    fd = os.dup(top)
    try:
        for i, part in enumerate(dirs):
            with suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=fd)
            try:
                sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                where = "/".join(dirs[: i + 1])
                raise OmgError(
                    f"omg init refused: {where} became a link or a file while it was writing "
                    f"{rel}; what it wrote before stays — look at {where} and run it again"
                ) from None
            os.close(fd)
            fd = sub
        yield fd
    finally:
        os.close(fd)
