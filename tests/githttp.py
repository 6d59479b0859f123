"""Smart HTTP for tests: `git http-backend` behind a token on 127.0.0.1, as GitHub serves git."""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pygit2

HTTP_BACKEND = Path("/usr/lib/git-core/git-http-backend")


@dataclass
class GitHttpServer:
    """``git http-backend`` behind Basic auth (user x-access-token, one token) on 127.0.0.1."""

    root: Path
    token: str
    #: a token that may fetch but never push (a job with ``contents: read``): GitHub answers
    #: its push 403
    read_token: str = ""
    server: ThreadingHTTPServer | None = None
    auth_seen: list[str] = field(default_factory=list)
    #: every request served, as "METHOD /path" (a push is a POST to …/git-receive-pack)
    requests: list[str] = field(default_factory=list)
    #: called with each push's request body before ``git http-backend`` takes it (a race: a
    #: ref moved by another job between this push's read and its write)
    before_push: Callable[[bytes], None] | None = None

    def pushes(self) -> int:
        """How many pushes were served so far."""
        return sum(1 for r in self.requests if r.startswith("POST ") and "receive-pack" in r)

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/repo.git"

    @property
    def bare(self) -> Path:
        return self.root / "repo.git"


def _handler(srv: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    def basic(token: str) -> str:
        return "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()

    expected = basic(srv.token)

    class Handler(BaseHTTPRequestHandler):
        timeout = 30

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                    if size == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _serve(self) -> None:
            given = self.headers.get("Authorization")
            srv.auth_seen.append(given or "")
            body = self._body() if self.command == "POST" else b""
            reader = bool(srv.read_token) and given == basic(srv.read_token)
            if reader and "receive-pack" in self.path:
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if given != expected and not reader:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="omg-test"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            srv.requests.append(f"{self.command} {path}")
            if srv.before_push is not None and "receive-pack" in path and self.command == "POST":
                srv.before_push(body)
            env = {
                "PATH": os.environ["PATH"],
                "HOME": str(srv.root),
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_PROJECT_ROOT": str(srv.root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": "x-access-token",
                "REMOTE_ADDR": "127.0.0.1",
                # GitHub packs its repositories on its own schedule, not after every push:
                # no `git gc --auto` process behind each receive-pack
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "receive.autogc",
                "GIT_CONFIG_VALUE_0": "false",
            }
            done = subprocess.run(
                [str(HTTP_BACKEND)], input=body, env=env, capture_output=True, timeout=60
            )
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            status = 200
            headers: list[tuple[str, str]] = []
            for line in head.decode().splitlines():
                key, _, value = line.partition(":")
                if key.lower() == "status":
                    status = int(value.split()[0])
                else:
                    headers.append((key, value.strip()))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@contextmanager
def serving(root: Path, token: str) -> Iterator[GitHttpServer]:
    """A server for the bare ``root/repo.git`` (created when missing) until the block ends."""
    srv = GitHttpServer(root, token)
    if not srv.bare.exists():
        pygit2.init_repository(str(srv.bare), bare=True, initial_head="main")
    srv.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(srv))
    srv.server.daemon_threads = True
    thread = threading.Thread(target=srv.server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield srv
    finally:
        srv.server.shutdown()
        srv.server.server_close()
        thread.join(timeout=10)
