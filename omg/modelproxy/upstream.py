"""An upstream: one model API the proxy forwards to, omg's key for it, and a small pool of
keep-alive connections to it."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # http.client and ssl only once a pool connects (a leg with agent nodes)
    import http.client
    import ssl

    from omg.modelproxy.headers import Headers
    from omg.modelproxy.usage import Api

#: The model APIs' own addresses (Anthropic's Messages API, OpenAI's Responses API), as the
#: CLIs' base URLs name them: claude appends ``/v1/messages``, codex appends ``/responses``.
ANTHROPIC = "https://api.anthropic.com"
OPENAI = "https://api.openai.com/v1"
#: Idle connections kept to one upstream.
KEPT = 4
#: Seconds a connection waits to connect, or between two reads of an answer (a streamed answer
#: may pause while the model thinks; the CLIs' own request timeout is ten minutes).
TIMEOUT_S = 600.0
#: What a key may hold: visible ASCII (it goes into a header as it is).
_KEY = re.compile(r"[\x21-\x7e]+")


@dataclass(frozen=True)
class Upstream:
    """A model API: which one it speaks, where it is, and omg's key for it (never shown)."""

    api: Api
    url: str
    key: str = field(repr=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the model API's URL {self.url!r} is not an http(s) URL")
        if parts.query or parts.fragment:
            raise ValueError(f"the model API's URL {self.url!r} has a query or fragment")
        if not _KEY.fullmatch(self.key):  # the key itself is never shown
            raise ValueError(
                f"the key for {self.url} is empty or holds a character a header cannot carry"
            )


class Pool:
    """Keep-alive connections to one upstream: taken for one request and its whole answer,
    given back when the answer was read to its end."""

    def __init__(self, upstream: Upstream, kept: int = KEPT) -> None:
        parts = urlsplit(upstream.url)
        self.prefix = parts.path.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._kept = kept
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._context = _tls() if self._https else None

    def _new(self) -> http.client.HTTPConnection:
        import http.client

        if self._context is not None:
            return http.client.HTTPSConnection(
                self._host, self._port, timeout=TIMEOUT_S, context=self._context
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=TIMEOUT_S)

    def give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if len(self._idle) < self._kept:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def send(
        self, method: str, target: str, headers: Headers, body: bytes
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request; its connection and the answer, read up to its headers. A kept
        connection the upstream closed while idle is replaced once, before any answer."""
        import http.client

        while True:
            with self._lock:
                conn, reused = (self._idle.pop(), True) if self._idle else (self._new(), False)
            try:
                conn.putrequest(method, self.prefix + target, skip_accept_encoding=True)
                for name, value in headers:
                    conn.putheader(name, value)
                if body or method not in ("GET", "HEAD"):
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body or None)
                return conn, conn.getresponse()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                conn.close()
                if not reused:
                    raise
            except BaseException:
                conn.close()
                raise


def _tls() -> ssl.SSLContext:
    import ssl

    return ssl.create_default_context()
