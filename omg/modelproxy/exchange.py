"""One exchange between an agent's CLI and a model API: the request admitted or refused (its
Host, its key, its path, its body, the execution's ceiling), sent on with omg's key, and the
answer relayed as it arrives, its usage settled before the client is given its end."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Protocol

from omg.modelproxy import answers, headers, usage
from omg.modelproxy.executions import Execution, Executions, Why
from omg.modelproxy.upstream import Pool, Upstream

#: Where the proxy listens: the loopback address only.
LOOPBACK = "127.0.0.1"
#: The largest request body forwarded (the Messages API's own limit is 32 MB).
MAX_BODY = 64 * 1024 * 1024
#: How much of an answer is read (and passed on) at once.
CHUNK = 64 * 1024
#: The requests each API's CLI makes, by method and path below the API's URL; True for those
#: that cost money (their answers' usage is read and priced).
ROUTES: dict[usage.Api, dict[tuple[str, str], bool]] = {
    "messages": {
        ("POST", "/v1/messages"): True,
        ("POST", "/v1/messages/count_tokens"): False,
        ("GET", "/v1/models"): False,
    },
    "responses": {
        ("POST", "/responses"): True,
        ("POST", "/responses/compact"): True,
        ("GET", "/models"): False,
    },
}


class Proxy(Protocol):
    """What an exchange needs of the proxy it belongs to (``server.ModelProxy``)."""

    @property
    def port(self) -> int: ...

    @property
    def upstreams(self) -> Mapping[str, Upstream]: ...

    @property
    def pools(self) -> Mapping[str, Pool]: ...

    @property
    def executions(self) -> Executions: ...


class Exchange:
    """One request from a client, refused or forwarded, and its answer relayed."""

    def __init__(self, handler: BaseHTTPRequestHandler, proxy: Proxy) -> None:
        self.h = handler
        self.proxy = proxy
        self.book = proxy.executions

    def answer(self, ans: answers.Answer) -> None:
        h = self.h
        h.send_response_only(ans.status)
        for name, value in ans.headers:
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(ans.body)

    def refuse(self, api: usage.Api, ex: Execution | None, why: Why, message: str) -> None:
        self.book.refuse(ex, why, message)
        self.h.close_connection = True  # the body may be unread: never reuse the connection
        self.answer(answers.refusal(api, why, message))

    def serve(self) -> None:
        admitted = self.admit()
        if admitted is None:
            return
        name, up, ex, placeholder, form, billable, body = admitted
        h = self.h
        with ex.slots:
            refusal = self.book.check(ex)
            if refusal is not None:
                h.close_connection = True
                self.answer(answers.refusal(up.api, refusal["why"], refusal["message"]))
                return
            sent = headers.outgoing(list(h.headers.items()), placeholder, form, up.key)
            target = h.path[len(name) + 1 :]
            self.forward(name, up, ex, target, sent, body, billable)

    def admit(self) -> tuple[str, Upstream, Execution, str, headers.Form, bool, bytes] | None:
        """The request's upstream, execution, placeholder and its form, whether it costs
        money, and its body; or None once it was refused (Host, key, path, body)."""
        h, proxy = self.h, self.proxy
        name, _, rest = h.path[1:].partition("/") if h.path.startswith("/") else ("", "", "")
        up = proxy.upstreams.get(name)
        api: usage.Api = up.api if up is not None else "messages"
        port = proxy.port
        if h.headers.get("Host", "") not in (f"{LOOPBACK}:{port}", f"localhost:{port}"):
            said = f"omg: the model proxy answers at {LOOPBACK}:{port} only"
            self.refuse(api, None, "host", said)
            return None
        if up is None:
            self.refuse(api, None, "path", f"omg: the model proxy has no API at /{name}")
            return None
        keys = headers.presented(h.headers.items())
        ex = self.book.find(keys[0][0]) if len({k for k, _ in keys}) == 1 else None
        if ex is None:
            self.refuse(api, None, "unknown", "omg: this key is not one omg gave a running "
                        "execution; the model API is reached only through omg")  # fmt: skip
            return None
        if ex.upstream != name:
            self.refuse(api, ex, "upstream", f"omg: this key is not one for /{name}")
            return None
        path = "/" + rest.partition("?")[0]
        billable = ROUTES[api].get((h.command, path))
        if billable is None:
            said = f"omg: the model proxy does not forward {h.command} {path}"
            self.refuse(api, ex, "path", said)
            return None
        body = self.body()
        if body is None:
            self.refuse(api, ex, "request", "omg: the request body is unreadable or larger "
                        f"than {MAX_BODY} bytes")  # fmt: skip
            return None
        if api == "responses" and _background(body):
            self.refuse(api, ex, "request", "omg: a background response is not forwarded "
                        "(its cost could not be counted)")  # fmt: skip
            return None
        return name, up, ex, keys[0][0], keys[0][1], billable, body

    def body(self) -> bytes | None:
        """The request's body (a declared length, or chunks), None past MAX_BODY or broken."""
        h = self.h
        if "chunked" in h.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            size = 0
            while True:
                line = h.rfile.readline(1024)
                try:
                    n = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    return None
                size += n
                if n < 0 or size > MAX_BODY:
                    return None
                if n == 0:
                    while h.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers: read and dropped
                    return b"".join(parts)
                parts.append(h.rfile.read(n))
                h.rfile.readline(1024)
        try:
            length = int(h.headers.get("Content-Length") or 0)
        except ValueError:
            return None
        if not 0 <= length <= MAX_BODY:
            return None
        data = h.rfile.read(length) if length else b""
        return data if len(data) == length else None

    def forward(
        self,
        name: str,
        up: Upstream,
        ex: Execution,
        target: str,
        sent: headers.Headers,
        body: bytes,
        billable: bool,
    ) -> None:
        h, pool = self.h, self.proxy.pools[name]
        self.book.begin(ex)
        settle = _Settle(self.book, ex, billable)
        try:
            try:
                conn, resp = pool.send(h.command, target, sent, body)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                said = f"{type(exc).__name__}: {exc}".replace(up.key, "***")
                settle(None, False)
                h.close_connection = True
                return self.answer(answers.unreachable(
                    up.api, f"omg: the model API at {up.url} could not be reached ({said})"
                ))  # fmt: skip
            reader = usage.reader(up.api, resp.getheader("Content-Type") or "")
            whole = self.relay(resp, reader, lambda: settle(reader.usage(), resp.status < 300))
            if whole and not resp.will_close:
                resp.close()  # read to its end: the connection may carry the next request
                pool.give_back(conn)
            else:
                conn.close()
            settle(reader.usage(), False)
        finally:
            settle(None, False)

    def relay(
        self, resp: http.client.HTTPResponse, reader: usage.Reader, settle: Callable[[], None]
    ) -> bool:
        """Pass the answer on as it arrives; whether it was read to its end. Its usage is
        settled before the client is given the answer's end (its last event, or its last
        byte), so the next request the CLI sends is checked against it."""
        h = self.h
        h.send_response_only(resp.status, resp.reason)
        for name, value in headers.incoming(resp.getheaders()):
            h.send_header(name, value)
        bodiless = resp.status in (204, 304) or 100 <= resp.status < 200
        chunked = resp.length is None and not bodiless
        if resp.length is not None:
            h.send_header("Content-Length", str(resp.length))
        elif chunked:
            h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        if bodiless:
            return True
        while True:
            try:
                data = resp.read1(CHUNK)
            except (OSError, http.client.HTTPException):
                h.close_connection = True  # the client sees the answer cut short
                return False
            reader.feed(data)
            if not data or reader.done or resp.length == 0:
                settle()
            try:
                if not data:
                    if chunked:
                        h.wfile.write(b"0\r\n\r\n")
                    return resp.length in (None, 0)
                h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            except OSError:
                h.close_connection = True  # the client went away: so does the upstream
                return False


class _Settle:
    """Settles one forwarded request's answer once: at its end, or as it was cut short."""

    def __init__(self, book: Executions, ex: Execution, billable: bool) -> None:
        self.book, self.ex, self.billable = book, ex, billable
        self.done = False

    def __call__(self, used: usage.Usage | None, ok: bool) -> None:
        if not self.done:
            self.done = True
            self.book.settle(self.ex, used, self.billable and ok)


def _background(body: bytes) -> bool:
    """Whether a Responses API request asks for a background response (run later, its usage
    never seen by the proxy); a cheap look first, so most bodies are never parsed."""
    if b'"background"' not in body:
        return False
    try:
        data = json.loads(body)
    except ValueError:
        return False
    return isinstance(data, dict) and bool(data.get("background"))
