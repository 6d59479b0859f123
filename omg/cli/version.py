"""What omg this is: its version and where pip installed it from (PEP 610 ``direct_url.json``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import metadata
from urllib.parse import urlsplit, urlunsplit

_GITHUB = re.compile(
    r"^(?:https://|git\+https://|ssh://git@|git@)github\.com[/:]([^/]+)/([^/]+?)(?:\.git)?/?$"
)
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Origin:
    """Where an install came from: a git commit (``repo`` is OWNER/NAME on GitHub, else the
    URL without credentials), or a directory (``editable`` when pip linked it)."""

    url: str
    commit: str = ""
    repo: str = ""
    editable: bool = False


def _distribution(dist: metadata.Distribution | None) -> metadata.Distribution | None:
    if dist is not None:
        return dist
    try:
        return metadata.distribution("omg")
    except metadata.PackageNotFoundError:
        return None


def origin(dist: metadata.Distribution | None = None) -> Origin | None:
    """Where ``dist`` (default: the installed omg) was installed from, as PEP 610 records it;
    None for an install from an index or an archive, or a record that is not PEP 610's."""
    found = _distribution(dist)
    try:
        raw = found.read_text("direct_url.json") if found is not None else None
        data = json.loads(raw) if raw else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None
    url = _shown(data["url"])
    vcs, where = data.get("vcs_info"), data.get("dir_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        commit = str(vcs.get("commit_id") or "")
        if not _COMMIT.fullmatch(commit):
            return None
        m = _GITHUB.match(data["url"])
        return Origin(url, commit, f"{m.group(1)}/{m.group(2)}" if m else "")
    if isinstance(where, dict):
        return Origin(url, editable=where.get("editable") is True)
    return None


def _shown(url: str) -> str:
    """``url`` fit to print: no user or token in it, nothing but printable ASCII."""
    try:
        parts = urlsplit(url)
        if parts.hostname and (parts.username or parts.password):
            host = parts.hostname + (f":{parts.port}" if parts.port else "")
            url = urlunsplit(parts._replace(netloc=host))
    except ValueError:
        return "(an unreadable URL)"
    return "".join(c if " " <= c < "\x7f" else c.encode("unicode_escape").decode() for c in url)


def version(dist: metadata.Distribution | None = None) -> str:
    """The installed version of omg (the package's own when it is not installed)."""
    found = _distribution(dist)
    if found is not None:
        return found.version
    from omg import __version__

    return __version__


def describe(dist: metadata.Distribution | None = None) -> str:
    """``omg 0.1.0``, and where it came from: ``(OWNER/omg@<commit>)`` for an install from a
    GitHub commit (what `omg init` pins), ``(git URL@<commit>)`` from another git server,
    ``(editable, URL)`` or ``(URL)`` from a directory."""
    line = f"omg {version(dist)}"
    found = origin(dist)
    if found is None:
        return line
    if found.commit:
        return f"{line} ({found.repo or 'git ' + found.url}@{found.commit})"
    return f"{line} ({'editable, ' if found.editable else ''}{found.url})"
