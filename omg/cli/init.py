"""`omg init [PATH]`: the workflows a repository needs (review, resume, lint) and a starter
graph, written once — `uses:` pinned to the omg commit in use — never over a file that differs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

from omg.cli import exits
from omg.cli.version import origin
from omg.errors import UsageError

#: Where each template goes, repository-relative.
FILES = {
    "omg-review.yml": ".github/workflows/omg-review.yml",
    "omg-resume.yml": ".github/workflows/omg-resume.yml",
    "omg-lint.yml": ".github/workflows/omg-lint.yml",
    "review-loop.yaml": "graphs/review-loop.yaml",
    "implement-review.yaml": "graphs/fragments/implement-review.yaml",
}
_PIN = re.compile(r"^([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)@([0-9a-f]{40})$")


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
    lines, kept = [], []
    for name, rel in FILES.items():
        path, text = root / rel, render(name, pin)
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            lines.append(f"unchanged  {rel}")
            continue
        if path.exists():
            kept.append(rel)
            lines.append(f"kept       {rel}: it differs from omg's, so it was not overwritten")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.omg-init")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        lines.append(f"wrote      {rel}")
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
