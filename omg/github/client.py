"""The GitHub REST client: every call omg makes to GitHub, with timeouts, retries and no repeats.

Standard library only (urllib): omg needs eight endpoints, and a dependency would cost every
action install more than these lines cost to read. The retry rules:

- a rate limit (429, or 403 saying "rate limit") is a refusal — nothing happened — so any
  request is retried after ``Retry-After`` (or ``x-ratelimit-reset``), within ``max_wait``;
- a 5xx or a dropped connection may or may not have happened: GET and PATCH are retried as
  they are; a POST is retried only after ``done()`` checked that it did not happen (a comment
  is found again by its hidden marker), so a comment is posted once. Those retries wait
  ``backoff`` seconds (1 unless ``OMG_API_BACKOFF`` says otherwise), doubled on each try.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Required, TypedDict
from urllib.parse import quote

from omg.errors import GitHubError, GitHubForbidden
from omg.kinds import Warn
from omg.mask import NOTHING, Masker


def _quiet(message: str) -> None:
    return None


class User(TypedDict, total=False):
    """A comment's author, as far as omg reads it."""

    type: str  # "Bot" for an app, "User" for a person


class IssueComment(TypedDict, total=False):
    """One issue or pull request comment, as far as omg reads it."""

    id: int
    body: str | None
    user: User | None
    created_at: str | None


@dataclass(frozen=True)
class Quiet:
    """Post nothing when omg already posted a comment carrying ``tag`` at ``since`` or later."""

    tag: str
    since: datetime


class WorkflowRun(TypedDict, total=False):
    """One run of a workflow (GET …/runs), as far as omg reads it."""

    id: int
    html_url: str
    created_at: str | None
    display_title: str | None


class DispatchedRun(TypedDict, total=False):
    """A dispatch's answer: the run it started (``id`` from a server that names it so)."""

    workflow_run_id: int | None
    id: int
    html_url: str


class DispatchRequest(TypedDict, total=False):
    """The body of a workflow dispatch."""

    ref: Required[str]
    inputs: Required[dict[str, str]]
    return_run_details: bool


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any
    headers: Mapping[str, str]


@dataclass(frozen=True)
class PullHead:
    head_sha: str
    head_ref: str
    fork: bool
    base_sha: str = ""  # the commit the pull request targets now
    base_ref: str = ""
    state: str = "open"  # or closed (merged included)


class GitHub:
    """One repository's REST API, as one token sees it."""

    def __init__(
        self,
        api_url: str,
        repository: str,
        token: str,
        *,
        timeout: float = 15.0,
        attempts: int = 4,
        max_wait: float = 60.0,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        warn: Warn = _quiet,
        mask: Masker = NOTHING,
    ) -> None:
        self.api = api_url.rstrip("/")
        self.repo = repository
        self.token = token
        #: Every body sent is masked: by the leg's masker, and always by this client's token.
        self.mask = mask.plus([token])
        self.timeout = timeout
        self.attempts = attempts
        self.max_wait = max_wait
        self.backoff = backoff  # the wait after a first 5xx, doubled on each try after
        self.sleep = sleep
        self.warn = warn
        #: Every request sent (each try), by method and endpoint: the leg's share of the
        #: token's rate limit (1,000 requests an hour per repository for GITHUB_TOKEN).
        self.calls: Counter[str] = Counter()
        #: GitHub's refusal of the first commit status (the token lacks ``statuses: write``)
        self.statuses_refused = ""

    # -- the one request path ----------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        *,
        done: Callable[[], Any] | None = None,
    ) -> Reply:
        """One call; ``done`` (POST only) tells whether an uncertain earlier try took effect."""
        url = f"{self.api}{path}" if path.startswith("/") else path
        last = ""
        for attempt in range(1, self.attempts + 1):
            if attempt > 1 and method == "POST" and done is not None and last != "limited":
                found = done()
                if found is not None:
                    return Reply(200, found, {})
            try:
                return self._send(method, url, body)
            except _Limited as lim:
                last, wait = "limited", lim.wait
                what = f"rate limited ({lim.status})"
            except _Unsure as uns:
                if method == "POST" and done is None:
                    raise GitHubError(
                        f"{method} {path} failed ({uns.what}) and may have taken effect, so it "
                        "is not repeated; check the repository and run the step again"
                    ) from None
                last, wait = "unsure", min(self.backoff * 2.0 ** (attempt - 1), self.max_wait)
                what = uns.what
            if attempt < self.attempts:
                if wait > self.max_wait:
                    raise GitHubError(
                        f"{method} {path}: GitHub asks to wait {wait:.0f}s, more than "
                        f"{self.max_wait:.0f}s; run the step again later"
                    )
                self.warn(f"GitHub {method} {path}: {what}; retrying in {wait:.0f}s")
                self.sleep(wait)
        raise GitHubError(
            f"{method} {path} kept failing ({what}) after {self.attempts} tries; "
            "GitHub may be down (https://www.githubstatus.com) — run the step again"
        )

    def _send(self, method: str, url: str, body: Mapping[str, Any] | None) -> Reply:
        self.calls[f"{method} {endpoint(url, self.repo)}"] += 1
        data = None if body is None else json.dumps(self.mask.record(dict(body))).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/vnd.github+json")
        req.add_header("X-GitHub-Api-Version", "2022-11-28")
        req.add_header("User-Agent", "omg")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return Reply(resp.status, _json(resp.read()), dict(resp.headers))
        except urllib.error.HTTPError as err:
            text = err.read().decode("utf-8", "replace")
            headers = dict(err.headers or {})
            wait = _wait(err.code, text, headers)
            if wait is not None:
                raise _Limited(err.code, wait) from None
            if err.code >= 500:
                raise _Unsure(f"HTTP {err.code}") from None
            return Reply(err.code, _json(text.encode()), headers)
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            reason = getattr(err, "reason", err)
            raise _Unsure(f"no answer: {reason}") from None

    def _ok(self, reply: Reply, what: str) -> Any:
        if reply.status >= 400:
            message = reply.body.get("message", "") if isinstance(reply.body, dict) else ""
            hint = {
                401: "the token is missing or expired",
                403: "the token lacks a permission (see the workflow's `permissions:`)",
                404: "not found, or the token cannot see it",
            }.get(reply.status, "see GitHub's message")
            refused = GitHubForbidden if reply.status == 403 else GitHubError
            raise refused(f"GitHub refused {what}: HTTP {reply.status} {message} ({hint})")
        return reply.body

    # -- the endpoints -------------------------------------------------------------------

    def permission(self, login: str) -> str:
        """The user's permission on the repository: admin, maintain, write, triage, read, none."""
        path = f"/repos/{self.repo}/collaborators/{quote(login)}/permission"
        reply = self.request("GET", path)
        if reply.status == 404:
            return "none"
        body = self._ok(reply, f"the permission of {login}")
        role = str(body.get("role_name") or "")
        return role if role in ("maintain", "triage") else str(body.get("permission") or "none")

    def pull(self, number: int) -> PullHead:
        body = self._ok(self.request("GET", f"/repos/{self.repo}/pulls/{number}"), f"PR #{number}")
        head_repo = (body["head"].get("repo") or {}).get("full_name")
        base = body["base"]
        return PullHead(
            str(body["head"]["sha"]),
            str(body["head"]["ref"]),
            head_repo != base["repo"]["full_name"],  # a deleted fork has no repo: a fork still
            str(base.get("sha") or ""),
            str(base.get("ref") or ""),
            str(body.get("state") or "open"),
        )

    def pull_state(self, number: int) -> str:
        """``open`` or ``closed`` (merged included); ``unknown`` when GitHub names no such pull
        request to this token (404) or answers something else."""
        reply = self.request("GET", f"/repos/{self.repo}/pulls/{number}")
        if reply.status == 404:
            return "unknown"
        state = self._ok(reply, f"PR #{number}").get("state")
        return state if state in ("open", "closed") else "unknown"

    def comments(self, number: int) -> list[IssueComment]:
        """Every comment of an issue or pull request, oldest first."""
        out: list[IssueComment] = []
        page = 1
        while True:
            path = f"/repos/{self.repo}/issues/{number}/comments?per_page=100&page={page}"
            batch = self._ok(self.request("GET", path), f"the comments of #{number}")
            out.extend(batch)
            if len(batch) < 100:
                return out
            page += 1

    def find_comment(self, number: int, marker: str) -> IssueComment | None:
        """omg's comment carrying ``marker``: one that starts with it (one that merely quotes
        it — a node's output in another graph's report, say — is not it) and was posted by an
        app's bot, as every comment made with the job's token is. A person's comment is never
        taken for omg's, whatever it says: omg would edit it for them, or stay silent."""
        return _marked(self.comments(number), marker)

    def upsert_comment(self, number: int, marker: str, body: str) -> int:
        """The comment carrying ``marker`` updated to ``body``, or posted once; its id."""
        found = self.find_comment(number, marker)
        if found is not None:
            path = f"/repos/{self.repo}/issues/comments/{found['id']}"
            self._ok(self.request("PATCH", path, {"body": body}), "updating the omg comment")
            return int(found["id"])
        return self._post(number, marker, body)

    def update_comment(self, comment_id: int, body: str) -> None:
        """Edit omg's comment ``comment_id`` (found once by its marker) to ``body``."""
        path = f"/repos/{self.repo}/issues/comments/{comment_id}"
        self._ok(self.request("PATCH", path, {"body": body}), "updating the omg comment")

    def post_once(
        self, number: int, marker: str, body: str, *, quiet: Quiet | None = None
    ) -> int | None:
        """Post ``body`` (which carries ``marker``) unless a comment with the marker exists —
        looked for first, so a re-run of the job that posted it (GitHub's "Re-run job")
        answers nothing twice; the comment's id either way. With ``quiet``, nothing is posted
        (None) while a comment of omg's carrying its tag is that recent."""
        listed = self.comments(number)
        found = _marked(listed, marker)
        if found is not None:
            return int(found["id"])
        if quiet is not None and any(
            quiet.tag in (c.get("body") or "")
            and _by_bot(c)
            and (made := _when(str(c.get("created_at") or ""))) is not None
            and made >= quiet.since
            for c in listed
        ):
            return None
        return self._post(number, marker, body)

    def _post(self, number: int, marker: str, body: str) -> int:
        path = f"/repos/{self.repo}/issues/{number}/comments"
        reply = self.request(
            "POST", path, {"body": body}, done=lambda: self.find_comment(number, marker)
        )
        return int(self._ok(reply, f"posting a comment on #{number}")["id"])

    def set_status(
        self, sha: str, context: str, state: str, description: str, target_url: str
    ) -> None:
        """Set the commit status ``context`` of ``sha``. Setting it again to the same values
        changes nothing GitHub shows (the latest status of a context is the one that counts), so
        an uncertain try is simply repeated. A token without ``statuses: write`` is refused
        (GitHubForbidden) once: later calls raise the same refusal without asking again."""
        if self.statuses_refused:
            raise GitHubForbidden(self.statuses_refused)
        body: dict[str, str] = {"state": state, "context": context, "description": description}
        if target_url.startswith(("https://", "http://")):
            body["target_url"] = target_url
        reply = self.request("POST", f"/repos/{self.repo}/statuses/{sha}", body, done=_again)
        try:
            self._ok(reply, f"setting the status {context} of {sha[:12]}")
        except GitHubForbidden as exc:
            self.statuses_refused = str(exc)  # a permission does not appear mid-job
            raise

    def dispatch(
        self, workflow: str, ref: str, inputs: Mapping[str, str], *, title: str
    ) -> dict[str, str]:
        """Start ``workflow`` on ``ref``; GitHub's new run id and url when it returns them.

        ``title`` is a text the new run's name carries (the shipped workflows put the run id in
        ``run-name``): an uncertain first try is repeated only if no such run appeared.
        """
        path = f"/repos/{self.repo}/actions/workflows/{quote(workflow)}/dispatches"
        since = datetime.now(UTC).replace(microsecond=0) - _SKEW
        payload: DispatchRequest = {"ref": ref, "inputs": dict(inputs), "return_run_details": True}
        reply = self.request(
            "POST", path, payload, done=lambda: self._dispatched(workflow, title, since)
        )
        if reply.status == 422 and "return_run_details" in json.dumps(reply.body):
            payload.pop("return_run_details")  # a server that predates run details
            reply = self.request(
                "POST", path, payload, done=lambda: self._dispatched(workflow, title, since)
            )
        body = self._ok(reply, f"dispatching {workflow} on {ref}")
        if not isinstance(body, dict):
            return {}
        out = {"workflow_run_id": str(body.get("workflow_run_id") or body.get("id") or "")}
        out["url"] = str(body.get("html_url") or "")
        return {k: v for k, v in out.items() if v}

    def _dispatched(self, workflow: str, title: str, since: datetime) -> DispatchedRun | None:
        path = (
            f"/repos/{self.repo}/actions/workflows/{quote(workflow)}/runs"
            "?event=workflow_dispatch&per_page=30"
        )
        body = self._ok(self.request("GET", path), f"the runs of {workflow}")
        runs: list[WorkflowRun] = body.get("workflow_runs", [])
        for run in runs:
            created = _when(str(run.get("created_at") or ""))
            if title in str(run.get("display_title") or "") and created and created >= since:
                return {"workflow_run_id": run.get("id"), "html_url": run.get("html_url", "")}
        return None


_SKEW = timedelta(seconds=30)  # clock skew between this runner and GitHub


class _Limited(Exception):
    def __init__(self, status: int, wait: float) -> None:
        self.status, self.wait = status, wait


class _Unsure(Exception):
    def __init__(self, what: str) -> None:
        self.what = what


_ID = re.compile(r"^(?:\d+|[0-9a-f]{40})$")


def endpoint(url: str, repo: str) -> str:
    """A request's endpoint, its ids and shas as ``{id}`` (``/statuses/{id}``), no query."""
    path = url.split("?", 1)[0]
    path = path[path.find(f"/repos/{repo}") :] if f"/repos/{repo}" in path else path
    path = path.replace(f"/repos/{repo}", "/repos/{owner}/{repo}", 1)
    return "/".join("{id}" if _ID.match(part) else part for part in path.split("/"))


def _again() -> None:
    """A ``done`` for a request that may be repeated: nothing to find, so send it again."""
    return None


def _marked(comments: list[IssueComment], marker: str) -> IssueComment | None:
    """The first of ``comments`` that starts with ``marker`` and was posted by an app's bot."""
    found = (c for c in comments if (c.get("body") or "").startswith(marker) and _by_bot(c))
    return next(found, None)


def _by_bot(comment: IssueComment) -> bool:
    """Whether a comment was posted by an app (``github-actions[bot]`` for ``GITHUB_TOKEN``):
    no person, stranger or collaborator, can post as one."""
    user = comment.get("user")
    return isinstance(user, Mapping) and user.get("type") == "Bot"


def _json(data: bytes) -> Any:
    if not data.strip():
        return None
    try:
        return json.loads(data)
    except ValueError:
        return {"message": data[:200].decode("utf-8", "replace")}


def _wait(status: int, text: str, headers: Mapping[str, str]) -> float | None:
    """Seconds to wait when GitHub answered "rate limited"; None for any other answer."""
    lower = {k.lower(): v for k, v in headers.items()}
    limited = status == 429 or (
        status == 403
        and ("rate limit" in text.lower() or lower.get("x-ratelimit-remaining") == "0")
    )
    if not limited:
        return None
    if lower.get("retry-after", "").strip().isdigit():
        return float(lower["retry-after"])
    reset = lower.get("x-ratelimit-reset", "")
    if reset.isdigit():
        return max(1.0, float(reset) - time.time())
    return 60.0  # GitHub's advice for a secondary limit without a header: wait a minute


def _when(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
