"""A loopback stand-in for the GitHub REST API: the endpoints `omg leg` calls, with faults.

It keeps what GitHub keeps between workflow runs (comments, dispatched runs), answers the
collaborator-permission API from a table, checks a dispatch against the target workflow's
declared inputs (omg's shipped workflows) the way GitHub does, records every request, and
injects the failures a real job meets: a 502 after the change was applied, a 429 with
``Retry-After``, a secondary rate limit (403), a permission the token lacks (403).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import io
import json
import re
import threading
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

REPO = "Codertocat/Hello-World"
#: The fork a pull request from outside comes from: its commits reach the base repository only
#: as ``refs/pull/<n>/head``, which GitHub keeps there.
FORK = "someone/Hello-World"
#: The workflows the simulated repository holds: the ones omg ships, as a leg dispatches them.
SHIPPED = Path(__file__).resolve().parents[2] / ".github" / "workflows"
#: The most inputs GitHub takes in one workflow dispatch.
MAX_INPUTS = 25


def declared(text: str) -> dict[str, dict[str, Any]] | None:
    """A workflow file's ``workflow_dispatch`` inputs as GitHub reads them (name → spec);
    None when the workflow has no such trigger. Read here on its own, as GitHub does, not
    with omg's lint of the same thing."""
    doc = yaml.safe_load(text)
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    if on == "workflow_dispatch" or (isinstance(on, list) and "workflow_dispatch" in on):
        return {}
    if not isinstance(on, dict) or "workflow_dispatch" not in on:
        return None
    inputs = (on["workflow_dispatch"] or {}).get("inputs") or {}
    return {str(k): dict(v or {}) for k, v in inputs.items()}


def shipped() -> dict[str, dict[str, dict[str, Any]] | None]:
    return {p.name: copy.deepcopy(_declared(p.read_text())) for p in sorted(SHIPPED.glob("*.yml"))}


@functools.cache
def _declared(text: str) -> dict[str, dict[str, Any]] | None:
    """``declared``, read once per text in a test process (every test's stand-in reads them)."""
    return declared(text)


def refused(inputs: dict[str, dict[str, Any]] | None, given: dict[str, Any]) -> str:
    """GitHub's 422 message for a dispatch of a workflow declaring ``inputs`` with ``given``
    ('' when it would start the run): the trigger, the count, unknown and missing inputs,
    and the values of choice and boolean inputs."""
    if inputs is None:
        return "Workflow does not have 'workflow_dispatch' trigger"
    if len(given) > MAX_INPUTS:
        return f"you may only define up to {MAX_INPUTS} `inputs` for a `workflow_dispatch` event"
    unknown = [k for k in given if k not in inputs]
    if unknown:
        return f"Unexpected inputs provided: {json.dumps(unknown)}"
    for name, spec in inputs.items():
        value = given.get(name, spec.get("default"))
        if spec.get("required") and (value is None or value == ""):
            return f"Required input '{name}' not provided"
        if name not in given:
            continue
        if spec.get("type") == "choice" and value not in spec.get("options", []):
            return f"Provided value '{value}' for input '{name}' not in the list of allowed values"
        if spec.get("type") == "boolean" and str(value).lower() not in ("true", "false"):
            return f"Provided value '{value}' for input '{name}' is not a valid boolean"
    return ""


#: The most bytes one artifact may hold here (GitHub's limits are the repository's storage
#: quota; a test lowers this to see the refusal).
ARTIFACT_LIMIT = 64 * 1024 * 1024


class ArtifactRefused(Exception):
    """What actions/upload-artifact fails with: a name used twice in one workflow run (409
    Conflict), or an artifact past the size limit."""


@dataclass
class Fault:
    """Answer the next ``times`` requests matching ``method`` and ``path`` (a regex) badly.

    ``kind``: ``502-after`` applies the request, then answers 502 (the uncertain case);
    ``502`` answers 502 without applying; ``429`` and ``403-limit`` are rate limits; ``403``
    is GitHub's answer to a token without the permission (a workflow lacking ``statuses:
    write``, say): "Resource not accessible by integration".
    """

    method: str
    path: str
    kind: str
    times: int = 1


@dataclass
class Request:
    method: str
    path: str
    body: Any
    authorization: str


@dataclass
class StandIn:
    repo: str = REPO
    permissions: dict[str, str] = field(default_factory=dict)  # login → admin|write|read|…
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)  # dispatched workflow runs
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # sha → oldest first
    faults: list[Fault] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    run_details: bool = True  # whether a dispatch returns the new run's id
    #: workflow file → its declared workflow_dispatch inputs (None: no such trigger); a
    #: dispatch is checked against them as GitHub checks it
    workflows: dict[str, dict[str, dict[str, Any]] | None] = field(default_factory=shipped)
    url: str = ""
    #: workflow run id → its artifacts (id, name, zip bytes), as actions/upload-artifact@v4
    #: leaves them: per run, by name, never overwritten
    artifacts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    artifact_limit: int = ARTIFACT_LIMIT
    #: tokens of jobs whose permissions grant reads alone (``contents: read``): GitHub answers
    #: their writes 403, whatever the write
    read_only: set[str] = field(default_factory=set)
    _next_id: int = 9000
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- what tests set up and read -----------------------------------------------------

    def set_pull(
        self,
        number: int,
        head_sha: str,
        head_ref: str,
        *,
        fork: bool = False,
        state: str = "open",
        base_sha: str = "",
    ) -> None:
        head_repo = FORK if fork else self.repo
        self.pulls[number] = {
            "number": number,
            "state": state,
            "head": {"sha": head_sha, "ref": head_ref, "repo": {"full_name": head_repo}},
            "base": {"ref": "main", "sha": base_sha, "repo": {"full_name": self.repo}},
        }

    def comments_on(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.comments if c["issue"] == number]

    def calls(self, method: str, pattern: str = "") -> list[Request]:
        return [r for r in self.requests if r.method == method and re.search(pattern, r.path)]

    def status(self, sha: str, context: str) -> dict[str, Any] | None:
        """The latest status of ``context`` on ``sha`` (what GitHub shows), None if never set."""
        found = [s for s in self.statuses.get(sha, []) if s["context"] == context]
        return found[-1] if found else None

    def add_comment(
        self, number: int, body: str, login: str = "someone", kind: str = "User"
    ) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            c = {
                "id": self._next_id,
                "issue": number,
                "body": body,
                "user": {"login": login, "type": kind},
                "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "html_url": f"https://github.com/{self.repo}/pull/{number}#c{self._next_id}",
            }
            self.comments.append(c)
            return c

    def upload(self, run_id: int, name: str, directory: Path) -> dict[str, Any]:
        """What an ``actions/upload-artifact@v4`` step of workflow run ``run_id`` does with
        ``directory``: its files zipped under ``name``; a name the run used already, or a zip
        past the limit, is refused (ArtifactRefused) and nothing is kept."""
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in sorted(p for p in directory.rglob("*") if p.is_file()):
                zf.write(path, path.relative_to(directory).as_posix())
        data = buf.getvalue()
        with self._lock:
            if any(a["name"] == name for a in self.artifacts.get(run_id, [])):
                raise ArtifactRefused(
                    "Failed to CreateArtifact: (409) Conflict: an artifact with this name "
                    "already exists on the workflow run"
                )
            if len(data) > self.artifact_limit:
                raise ArtifactRefused(f"artifact {name} is {len(data)} bytes, over the limit")
            self._next_id += 1
            made = {"id": self._next_id, "name": name, "zip": data, "run": run_id}
            self.artifacts.setdefault(run_id, []).append(made)
            return made

    def download(self, run_id: int, name: str, into: Path) -> None:
        """What ``actions/download-artifact@v4`` with ``name`` does in workflow run ``run_id``:
        the artifact's files extracted into ``into``; KeyError when the run has none so named."""
        found = next((a for a in self.artifacts.get(run_id, []) if a["name"] == name), None)
        if found is None:
            raise KeyError(f"Artifact not found for name: {name}")
        into.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(io.BytesIO(found["zip"])) as zf:
            zf.extractall(into)

    def _stored(self, artifact_id: int) -> dict[str, Any] | None:
        found = [a for run in self.artifacts.values() for a in run if a["id"] == artifact_id]
        return found[0] if found else None

    def _artifact(self, a: dict[str, Any]) -> dict[str, Any]:
        """An artifact as the REST API describes it (``components/schemas/artifact``)."""
        api = f"{self.url}/repos/{self.repo}/actions/artifacts/{a['id']}"
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {
            "id": a["id"], "node_id": f"MDg6QXJ0aWZhY3Q{a['id']}", "name": a["name"],
            "size_in_bytes": len(a["zip"]), "url": api, "archive_download_url": f"{api}/zip",
            "expired": False, "created_at": stamp, "expires_at": stamp, "updated_at": stamp,
            "digest": "sha256:" + hashlib.sha256(a["zip"]).hexdigest(),
            "workflow_run": {"id": a["run"]},
        }  # fmt: skip

    # -- the server -----------------------------------------------------------------------

    def handle(self, method: str, target: str, body: Any, auth: str) -> tuple[int, Any, dict]:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        if m := re.fullmatch(r"/_blob/artifacts/(\d+)", path):  # storage, not the REST API
            found = self._stored(int(m.group(1)))
            return (200, found["zip"], {}) if found else (404, {"message": "Not Found"}, {})
        self.requests.append(Request(method, target, body, auth))
        fault = self._fault(method, path)
        if fault is not None and fault.kind == "429":
            return 429, {"message": "API rate limit exceeded"}, {"Retry-After": "1"}
        if fault is not None and fault.kind == "403-limit":
            return (
                403,
                {"message": "You have exceeded a secondary rate limit."},
                {"Retry-After": "1"},
            )
        if fault is not None and fault.kind == "502":
            return 502, {"message": "Bad Gateway"}, {}
        if method != "GET" and auth.split(" ")[-1] in self.read_only:
            return 403, {"message": "Resource not accessible by integration"}, {}
        if fault is not None and fault.kind == "403":  # the token lacks the permission
            return 403, {"message": "Resource not accessible by integration"}, {}
        status, answer = self._route(method, path, query, body)
        if fault is not None and fault.kind == "502-after":
            return 502, {"message": "Bad Gateway"}, {}
        if status == 302:  # a download: GitHub answers with where the archive is
            return 302, None, {"Location": answer["Location"]}
        return status, answer, {}

    def _fault(self, method: str, path: str) -> Fault | None:
        for f in self.faults:
            if f.times > 0 and f.method == method and re.search(f.path, path):
                f.times -= 1
                return f
        return None

    def _route(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any]:
        base = f"/repos/{self.repo}"
        if not path.startswith(base):
            return 404, {"message": "Not Found"}
        rest = path[len(base) :]
        if m := re.fullmatch(r"/collaborators/([^/]+)/permission", rest):
            held = self.permissions.get(m.group(1))
            if held is None:
                return 404, {"message": f"{m.group(1)} is not a user"}
            return 200, {"permission": "write" if held == "maintain" else held, "role_name": held}
        if m := re.fullmatch(r"/pulls/(\d+)", rest):
            pr = self.pulls.get(int(m.group(1)))
            return (200, pr) if pr else (404, {"message": "Not Found"})
        if m := re.fullmatch(r"/issues/(\d+)/comments", rest):
            number = int(m.group(1))
            if method == "POST":
                return 201, self.add_comment(number, body["body"], "github-actions[bot]", "Bot")
            per = int(query.get("per_page", ["30"])[0])
            page = int(query.get("page", ["1"])[0])
            mine = self.comments_on(number)
            return 200, mine[(page - 1) * per : page * per]
        if m := re.fullmatch(r"/issues/comments/(\d+)", rest):
            found = next((c for c in self.comments if c["id"] == int(m.group(1))), None)
            if found is None:
                return 404, {"message": "Not Found"}
            found["body"] = body["body"]
            return 200, found
        if m := re.fullmatch(r"/actions/workflows/([^/]+)/dispatches", rest):
            if m.group(1) not in self.workflows:
                return 404, {"message": "Not Found"}
            why = refused(self.workflows[m.group(1)], body.get("inputs") or {})
            if why:
                return 422, {"message": why}
            with self._lock:
                self._next_id += 1
                run = {
                    "id": self._next_id,
                    "workflow": m.group(1),
                    "ref": body["ref"],
                    "inputs": body.get("inputs", {}),
                    "display_title": f"omg {body.get('inputs', {}).get('run-id', '')}",
                    "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "html_url": f"https://github.com/{self.repo}/actions/runs/{self._next_id}",
                    "event": "workflow_dispatch",
                }
                self.runs.append(run)
            if self.run_details and body.get("return_run_details"):
                return 200, {
                    "workflow_run_id": run["id"],
                    "run_url": "",
                    "html_url": run["html_url"],
                }
            return 204, None
        if m := re.fullmatch(r"/statuses/([0-9a-f]{40})", rest):
            if body.get("state") not in ("pending", "success", "failure", "error"):
                return 422, {"message": "Validation Failed"}
            if len(body.get("description") or "") > 140:
                return 422, {"message": "description is too long (maximum is 140 characters)"}
            with self._lock:  # ids of their own: comment ids stay as tests expect them
                made = {"id": 1 + sum(map(len, self.statuses.values())), **body}
                self.statuses.setdefault(m.group(1), []).append(made)
            return 201, made
        if m := re.fullmatch(r"/actions/runs/(\d+)/artifacts", rest):
            mine = self.artifacts.get(int(m.group(1)), [])
            named = [a for a in mine if a["name"] == query["name"][0]] if "name" in query else mine
            per = int(query.get("per_page", ["30"])[0])
            page = int(query.get("page", ["1"])[0])
            shown = [self._artifact(a) for a in named[(page - 1) * per : page * per]]
            return 200, {"total_count": len(named), "artifacts": shown}
        if m := re.fullmatch(r"/actions/artifacts/(\d+)/([^/]+)", rest):
            found = self._stored(int(m.group(1)))
            if not found or m.group(2) != "zip":
                return 404, {"message": "Not Found"}
            return 302, {"Location": f"{self.url}/_blob/artifacts/{found['id']}"}
        if m := re.fullmatch(r"/actions/workflows/([^/]+)/runs", rest):
            mine = [r for r in self.runs if r["workflow"] == m.group(1)]
            return 200, {"total_count": len(mine), "workflow_runs": list(reversed(mine))}
        return 404, {"message": "Not Found"}

    def start(self) -> ThreadingHTTPServer:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                body = json.loads(raw) if raw else None
                auth = self.headers.get("Authorization", "")
                status, answer, headers = stand_in.handle(self.command, self.path, body, auth)
                raw_answer = isinstance(answer, bytes)
                if raw_answer:
                    data = answer
                else:
                    data = b"" if answer is None else json.dumps(answer).encode()
                self.send_response(status)
                kind = "application/zip" if raw_answer else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _answer

            def log_message(self, format: str, *args: Any) -> None:
                return None

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        # polled every 50 ms, not serve_forever's 500: each test's shutdown waits out one poll
        poll = {"poll_interval": 0.05}
        threading.Thread(target=server.serve_forever, kwargs=poll, daemon=True).start()
        return server
