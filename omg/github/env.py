"""GitHub: the one module that reads GITHUB_* variables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from omg.errors import UsageError


def server_host(env: Mapping[str, str]) -> str | None:
    """The host of the GitHub server a workflow runs against (github.com unless GHES)."""
    return urlsplit(env.get("GITHUB_SERVER_URL") or "https://github.com").hostname


def actor(env: Mapping[str, str]) -> str | None:
    """Who triggered the workflow run, when omg runs inside GitHub Actions."""
    return env.get("GITHUB_ACTOR") or None


def git_tokens(env: Mapping[str, str]) -> list[tuple[str, str, str | None]]:
    """Tokens git may offer an HTTPS remote, each with the one host it may go to (None: any).

    ``OMG_GIT_TOKEN`` goes to any host; ``GITHUB_TOKEN`` only to the GitHub server of
    ``GITHUB_SERVER_URL`` (github.com by default), so a stray remote never receives it.
    """
    out: list[tuple[str, str, str | None]] = []
    if env.get("OMG_GIT_TOKEN"):
        out.append(("OMG_GIT_TOKEN", env["OMG_GIT_TOKEN"], None))
    if env.get("GITHUB_TOKEN"):
        out.append(("GITHUB_TOKEN", env["GITHUB_TOKEN"], server_host(env)))
    return out


def api_access(env: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(API URL, owner/name, token) for a command that asks GitHub something inside or outside
    Actions (``GITHUB_TOKEN`` and ``GITHUB_REPOSITORY`` set); None without them."""
    token, repository = env.get("GITHUB_TOKEN", ""), env.get("GITHUB_REPOSITORY", "")
    if not token or not repository:
        return None
    return (env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"), repository, token


@dataclass(frozen=True)
class Actions:
    """Everything a GitHub Actions job tells omg through its environment, read once."""

    event_name: str
    event_path: Path | None
    repository: str  # owner/name
    api_url: str
    server_url: str
    token: str = field(default="", repr=False)  # never in a repr, so never in a traceback's
    output: Path | None = None  # GITHUB_OUTPUT
    summary: Path | None = None  # GITHUB_STEP_SUMMARY
    workflow_ref: str = ""  # owner/name/.github/workflows/file.yml@refs/heads/main
    ref: str = ""
    sha: str = ""
    actor: str = ""
    run_id: str = ""
    run_attempt: int = 1

    @property
    def workflow_file(self) -> str:
        """The file name of the running workflow (what a dispatch names), '' if unknown."""
        path = self.workflow_ref.split("@", 1)[0]
        return path.rsplit("/", 1)[-1] if "/.github/workflows/" in path else ""

    @property
    def workflow_branch(self) -> str:
        """The branch the running workflow file was read from, '' if not a branch."""
        ref = self.workflow_ref.split("@", 1)[1] if "@" in self.workflow_ref else self.ref
        return ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else ""

    @property
    def run_url(self) -> str:
        """The web page of this workflow run."""
        if not self.run_id:
            return ""
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    def tree_url(self, branch: str) -> str:
        return f"{self.server_url}/{self.repository}/tree/{branch}"


def api_backoff(env: Mapping[str, str]) -> float:
    """``OMG_API_BACKOFF``: seconds to wait before retrying a GitHub 5xx (doubled each try)."""
    raw = env.get("OMG_API_BACKOFF", "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 60:
        raise UsageError(
            f"OMG_API_BACKOFF={raw!r} is not a number of seconds from 0 to 60; unset it for the "
            "default of 1"
        )
    return value


def output_file(env: Mapping[str, str]) -> Path | None:
    """GITHUB_OUTPUT, for a command that also runs outside Actions (None there)."""
    return Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None


def step_summary(env: Mapping[str, str]) -> tuple[Path, str] | None:
    """GITHUB_STEP_SUMMARY and this workflow run's page ('' when unknown), for a command that
    also runs outside Actions (None there)."""
    if not env.get("GITHUB_STEP_SUMMARY"):
        return None
    try:
        url = actions(env).run_url
    except UsageError:
        url = ""
    return Path(env["GITHUB_STEP_SUMMARY"]), url


def actions(env: Mapping[str, str]) -> Actions:
    """The job's GitHub context; a UsageError when omg is not running inside GitHub Actions."""
    missing = [k for k in ("GITHUB_EVENT_NAME", "GITHUB_REPOSITORY") if not env.get(k)]
    if missing:
        raise UsageError(
            f"`omg leg` runs inside GitHub Actions, but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not set; outside Actions use "
            "`omg run` / `omg resume`"
        )
    try:
        attempt = int(env.get("GITHUB_RUN_ATTEMPT") or 1)
    except ValueError:
        attempt = 1

    def path(name: str) -> Path | None:
        return Path(env[name]) if env.get(name) else None

    return Actions(
        event_name=env["GITHUB_EVENT_NAME"],
        event_path=path("GITHUB_EVENT_PATH"),
        repository=env["GITHUB_REPOSITORY"],
        api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
        server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
        token=env.get("GITHUB_TOKEN", ""),
        output=path("GITHUB_OUTPUT"),
        summary=path("GITHUB_STEP_SUMMARY"),
        workflow_ref=env.get("GITHUB_WORKFLOW_REF", ""),
        ref=env.get("GITHUB_REF", ""),
        sha=env.get("GITHUB_SHA", ""),
        actor=env.get("GITHUB_ACTOR", ""),
        run_id=env.get("GITHUB_RUN_ID", ""),
        run_attempt=max(1, attempt),
    )
