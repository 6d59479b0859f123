"""The proxy: a loopback HTTP server between the agent CLIs and the model APIs (each request
an ``exchange``).

``ModelProxy`` holds omg's real keys (handed to it, never read from the environment), listens
on 127.0.0.1 at a port of its own, and gives each execution a ``Grant``: a placeholder key and
the URL of its API at the proxy (``/<upstream>``). A request is forwarded only when its Host is
the loopback address, it presents the placeholder of a running execution of that upstream, its
path is one the API's CLI uses, and the execution is under its ceiling; the placeholder is
swapped for omg's key in the same header form, and the answer is streamed back byte for byte
as it arrives while its usage is read, priced and added to the execution's totals. Nothing is
logged: not a key, not a body.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from omg.modelproxy.exchange import LOOPBACK, Exchange
from omg.modelproxy.executions import (
    IN_FLIGHT,
    Ceiling,
    ExecutionRecord,
    Executions,
    Grant,
    Pricer,
    Why,
)
from omg.modelproxy.upstream import Pool, Upstream

#: Seconds a client's idle keep-alive connection is held open.
IDLE_S = 300.0
#: What an upstream's name at the proxy may be (the first segment of the path).
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")


class ModelProxy:
    """omg's loopback model-API proxy; ``with ModelProxy(…) as proxy:`` serves it on a thread.

    ``upstreams`` names each model API at the proxy: its requests arrive under ``/<name>``
    (the URL a CLI is given is ``url(name)``, or a grant's ``base_url``).
    """

    def __init__(self, upstreams: Mapping[str, Upstream], *, in_flight: int = IN_FLIGHT) -> None:
        for name in upstreams:
            if not _NAME.fullmatch(name):
                raise ValueError(f"upstream name {name!r}: lower-case letters, digits, '-'")
        self.upstreams = dict(upstreams)
        self.pools = {name: Pool(up) for name, up in upstreams.items()}
        self._in_flight = in_flight
        self.executions = Executions()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    def __repr__(self) -> str:
        return f"ModelProxy({sorted(self.upstreams)}, port={self.port})"

    # -- life --------------------------------------------------------------------------------
    def start(self) -> ModelProxy:
        server = _Server((LOOPBACK, 0), _Handler)
        server.proxy = self
        self._server, self.port = server, int(server.server_address[1])
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: the listening socket, every client connection, the upstream pools."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            server.drop_clients()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for pool in self.pools.values():
            pool.close()

    def __enter__(self) -> ModelProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- executions ----------------------------------------------------------------------------
    def url(self, upstream: str) -> str:
        """The base URL an agent CLI is given for ``upstream`` (its requests go below it)."""
        if upstream not in self.upstreams:
            raise KeyError(f"the proxy has no upstream {upstream!r}")
        return f"http://{LOOPBACK}:{self.port}/{upstream}"

    def register(
        self,
        upstream: str,
        *,
        label: str,
        pricer: Pricer,
        ceiling: Ceiling = None,
        ceiling_tokens: int | None = None,
    ) -> Grant:
        """A new running execution of ``upstream``'s API: the grant its CLI is given.
        ``pricer`` prices each answer's usage; ``ceiling`` is the most it may spend in dollars
        (or a callable asked before each request), ``ceiling_tokens`` the most tokens."""
        return self.executions.register(
            label, upstream, self.url(upstream), pricer, ceiling, ceiling_tokens, self._in_flight
        )

    def finish(self, grant: Grant) -> ExecutionRecord:
        """The execution ended: its placeholder is refused from now on. Its record."""
        return self.executions.finish(grant)

    def record(self, grant: Grant) -> ExecutionRecord:
        """What the proxy saw of the execution so far."""
        return self.executions.record(grant)

    @property
    def strays(self) -> dict[Why, int]:
        """Refused requests of no execution (an unknown key, none, a foreign Host), by why."""
        return dict(self.executions.strays)


class _Server(ThreadingHTTPServer):
    """One thread per client connection; it prints nothing, and it can drop its clients."""

    daemon_threads = True
    proxy: ModelProxy

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.clients: set[socket.socket] = set()
        self.clients_lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # never a traceback on stderr: it could quote a header

    def drop_clients(self) -> None:
        with self.clients_lock:
            clients, self.clients = self.clients, set()
        for sock in clients:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = IDLE_S
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.clients_lock:
            self.server.clients.add(self.connection)

    def finish(self) -> None:
        with self.server.clients_lock:
            self.server.clients.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def parse_request(self) -> bool:
        """The request line and headers; ``Connection: close`` among other options too."""
        if not super().parse_request():
            return False
        options = self.headers.get("Connection", "").lower().split(",")
        if "close" in (o.strip() for o in options):
            self.close_connection = True
        return True

    def do_POST(self) -> None:
        Exchange(self, self.server.proxy).serve()

    do_GET = do_PUT = do_DELETE = do_PATCH = do_POST
