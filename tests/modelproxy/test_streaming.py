"""The proxy on the wire, against the stub model and a raw HTTP client: every answer passes
byte for byte (server-sent events and JSON, both APIs, an error with retry-after), each event
as it arrives; the request goes on with omg's key and without the client's hop-by-hop headers
or any that name the placeholder; the Host must be the loopback address; only the paths the
CLIs use are forwarded; an unreachable API is a 502 in the API's own words."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from omg.modelproxy import ModelProxy, Upstream
from omg.modelproxy.executions import Grant
from omg.runners.claude.prices import price as claude_price
from omg.stubmodel import StubModel
from omg.stubmodel.script import build

from .conftest import ANTHROPIC_KEY, OPENAI_KEY

SCRIPT = {"rules": [
    {"name": "limited", "when": {"prompt": "^limit"},
     "error": {"status": 429, "retry_after": 7, "message": "slow down"}},
    {"name": "tool", "when": {"prompt": "^tool"}, "turns": [
        {"tool": "exec_command", "input": {"cmd": "true"}, "usage": {"input_tokens": 12}}]},
    {"name": "hello", "reply": "hello there", "turns": [
        {"text": "hello there", "usage": {"input_tokens": 9, "output_tokens": 3,
                                          "cache_read_input_tokens": 5}}]},
]}  # fmt: skip

#: Headers that frame one hop, or stamp the moment: not the answer's own.
FRAMING = {"content-length", "transfer-encoding", "connection", "date"}


def messages(prompt: str, stream: bool) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "stream": stream,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": prompt}],
    }


def responses(prompt: str) -> dict[str, Any]:
    return {
        "model": "gpt-test",
        "stream": True,
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
        ],
    }


#: (upstream, path at the API, request body): each answer kind of each API.
CASES = {
    "messages, streamed": ("anthropic", "/v1/messages?beta=true", messages("hi", True)),
    "messages, JSON": ("anthropic", "/v1/messages", messages("hi", False)),
    "messages, a 429 with retry-after": ("anthropic", "/v1/messages", messages("limit", True)),
    "responses, streamed text": ("openai", "/responses", responses("hi")),
    "responses, streamed tool call": ("openai", "/responses", responses("tool")),
    "responses, a 429 with retry-after": ("openai", "/responses", responses("limit")),
}


def fetch(
    port: int, path: str, body: dict[str, Any], headers: dict[str, str]
) -> tuple[int, list[tuple[str, str]], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", path, json.dumps(body).encode(), headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.getheaders(), data


def key(grant: Grant) -> dict[str, str]:
    """The header a CLI presents its placeholder in: claude's ``x-api-key``, codex's bearer."""
    if grant.upstream == "anthropic":
        return {"x-api-key": grant.placeholder}
    return {"Authorization": f"Bearer {grant.placeholder}"}


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def kept(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(k.lower(), v) for k, v in headers if k.lower() not in FRAMING]


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_answer_passes_byte_for_byte(case: str) -> None:
    """The same script answered twice from a fresh stand-in (its ids count from 1): once
    straight to the client, once through the proxy."""
    name, path, body = CASES[case]
    direct, behind = StubModel(build(SCRIPT, "s")), StubModel(build(SCRIPT, "s"))
    with direct.serve(), behind.serve():
        prefix = "/v1" if name == "openai" else ""
        want = fetch(port_of(direct.url), prefix + path, body, {})
        ups = {
            "anthropic": Upstream("messages", behind.url, ANTHROPIC_KEY),
            "openai": Upstream("responses", f"{behind.url}/v1", OPENAI_KEY),
        }
        with ModelProxy(ups) as proxy:
            grant = proxy.register(name, label="t", pricer=claude_price)
            got = fetch(proxy.port, f"/{name}{path}", body, key(grant))
            record = proxy.finish(grant)
    assert got[0] == want[0]
    assert kept(got[1]) == kept(want[1])
    assert got[2] == want[2]
    assert record["requests"] == 1
    if want[0] == 429:
        assert ("retry-after", "7") in kept(got[1]) and record["usage"] == {}
    else:
        assert record["usage"]["input_tokens"] in (9, 12)


class Paced(BaseHTTPRequestHandler):
    """An upstream that sends one event, then waits until the test has read it through the
    proxy before it sends the next: a proxy that held any back would never see the second."""

    protocol_version = "HTTP/1.1"
    events: ClassVar[list[bytes]] = [
        b"event: message_start\ndata: {}\n\n",
        b"event: ping\ndata: {}\n\n",
        b"event: message_stop\ndata: {}\n\n",
    ]
    read: ClassVar[list[threading.Event]] = []

    def log_message(self, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event, read in zip(self.events, self.read, strict=True):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            if not read.wait(10):
                return
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture
def paced() -> Iterator[str]:
    Paced.read = [threading.Event() for _ in Paced.events]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Paced)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_each_event_passes_as_it_arrives(paced: str) -> None:
    with ModelProxy({"anthropic": Upstream("messages", paced, ANTHROPIC_KEY)}) as proxy:
        grant = proxy.register("anthropic", label="t", pricer=claude_price)
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        conn.request("POST", "/anthropic/v1/messages", b"{}", {"x-api-key": grant.placeholder})
        resp = conn.getresponse()
        for event, read in zip(Paced.events, Paced.read, strict=True):
            got = b""
            while len(got) < len(event):
                got += resp.read1(len(event) - len(got))  # times out if the proxy held it
            assert got == event
            read.set()
        assert resp.read() == b""
        conn.close()


def raw(port: int, request: bytes) -> bytes:
    """A request as bytes on a fresh connection, and the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return out


def test_the_request_goes_on_with_omgs_key_and_nothing_of_the_hop(
    stub: StubModel, proxy: ModelProxy
) -> None:
    stub.script = build(SCRIPT, "s")
    stub.seen.clear()
    grant = proxy.register("anthropic", label="t", pricer=claude_price)
    body = json.dumps(messages("hi", False)).encode()
    request = (
        f"POST /anthropic/v1/messages HTTP/1.1\r\nHost: 127.0.0.1:{proxy.port}\r\n"
        f"x-api-key: {grant.placeholder}\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\n"
        "Keep-Alive: timeout=5\r\nProxy-Authorization: Basic eA==\r\nTE: trailers\r\n"
        f"Upgrade: h2c\r\nX-Note: mine is {grant.placeholder}\r\nAccept-Encoding: gzip\r\n"
        f"anthropic-version: 2023-06-01\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    answer = raw(proxy.port, request)
    assert answer.startswith(b"HTTP/1.1 200 ")
    sent = {k.lower(): v for k, v in stub.seen[-1].headers}
    assert sent["x-api-key"] == ANTHROPIC_KEY and sent["accept-encoding"] == "identity"
    assert sent["anthropic-version"] == "2023-06-01"
    hop = {"x-hop", "keep-alive", "proxy-authorization", "te", "upgrade", "x-note"}
    assert not hop & set(sent), sorted(hop & set(sent))
    assert not any(grant.placeholder in v for v in sent.values())


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "127.0.0.2:{port}", ""]
)
def test_a_request_for_another_host_is_refused(
    stub: StubModel, proxy: ModelProxy, host: str
) -> None:
    """A page on another site whose name a resolver points at 127.0.0.1 (DNS rebinding)
    reaches the proxy with its own name as the Host: refused before any key is looked at."""
    stub.seen.clear()
    grant = proxy.register("anthropic", label="t", pricer=claude_price)
    line = f"Host: {host.format(port=proxy.port)}\r\n" if host else ""
    answer = raw(proxy.port, (
        f"POST /anthropic/v1/messages HTTP/1.1\r\n{line}x-api-key: {grant.placeholder}\r\n"
        "Content-Length: 2\r\n\r\n{}"
    ).encode())  # fmt: skip
    assert answer.startswith(b"HTTP/1.1 403 ")
    assert b'"permission_error"' in answer and b"omg: the model proxy answers at" in answer
    assert proxy.strays == {"host": 1} and stub.seen == []
    assert proxy.record(grant)["refused"] == 0


def test_localhost_by_name_is_the_loopback_address(stub: StubModel, proxy: ModelProxy) -> None:
    stub.script = build(SCRIPT, "s")
    grant = proxy.register("anthropic", label="t", pricer=claude_price)
    answer = raw(proxy.port, (
        f"POST /anthropic/v1/messages/count_tokens HTTP/1.1\r\nHost: localhost:{proxy.port}\r\n"
        f"x-api-key: {grant.placeholder}\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{{}}"
    ).encode())  # fmt: skip
    assert answer.startswith(b"HTTP/1.1 200 ") and b'"input_tokens"' in answer


REFUSED_PATHS = [
    ("anthropic", "POST", "/v1/messages/batches", 404, "path"),
    ("anthropic", "POST", "/v1/files", 404, "path"),
    ("anthropic", "GET", "/v1/messages", 404, "path"),
    ("anthropic", "POST", "/v1/../v1/messages", 404, "path"),
    ("openai", "POST", "/batches", 404, "path"),
    ("openai", "GET", "/responses/resp_1", 404, "path"),
    ("openai", "POST", "/v1/responses", 404, "path"),
]


@pytest.mark.parametrize(("name", "method", "path", "status", "why"), REFUSED_PATHS)
def test_only_the_paths_the_clis_use_are_forwarded(
    stub: StubModel, proxy: ModelProxy, name: str, method: str, path: str, status: int, why: str
) -> None:
    """Batches, files, a stored response: what the CLIs never ask, and what would cost money
    (or show work) out of the proxy's sight, stays refused."""
    stub.seen.clear()
    grant = proxy.register(name, label="t", pricer=claude_price)
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    conn.request(method, f"/{name}{path}", b"{}" if method == "POST" else None, key(grant))
    resp = conn.getresponse()
    assert resp.status == status and b"omg: the model proxy does not forward" in resp.read()
    assert [r["why"] for r in proxy.record(grant)["refusals"]] == [why]
    assert stub.seen == []


def test_a_background_response_is_refused(stub: StubModel, proxy: ModelProxy) -> None:
    """A background response runs after its request answered: its cost would never pass."""
    stub.seen.clear()
    grant = proxy.register("openai", label="t", pricer=claude_price)
    asked = {**responses("hi"), "background": True}
    status, _, body = fetch(proxy.port, "/openai/responses", asked, key(grant))
    assert status == 400 and b"background response is not forwarded" in body
    assert json.loads(body)["error"]["code"] == "omg_request" and stub.seen == []


def test_a_key_for_one_api_opens_nothing_at_the_other(stub: StubModel, proxy: ModelProxy) -> None:
    stub.seen.clear()
    grant = proxy.register("anthropic", label="t", pricer=claude_price)
    bearer = {"Authorization": f"Bearer {grant.placeholder}"}
    status, _, body = fetch(proxy.port, "/openai/responses", responses("hi"), bearer)
    assert status == 400 and json.loads(body)["error"]["code"] == "omg_upstream"
    assert stub.seen == []


def test_two_different_keys_in_one_request_are_no_key(stub: StubModel, proxy: ModelProxy) -> None:
    stub.seen.clear()
    grant = proxy.register("anthropic", label="t", pricer=claude_price)
    status, _, _ = fetch(
        proxy.port,
        "/anthropic/v1/messages",
        messages("hi", False),
        {"x-api-key": grant.placeholder, "Authorization": "Bearer other"},
    )
    assert status == 403 and proxy.strays == {"unknown": 1} and stub.seen == []


def test_an_unreachable_api_is_a_502_in_its_own_words() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, never listening: connections are refused
        ups = {
            "anthropic": Upstream("messages", f"http://127.0.0.1:{port}", ANTHROPIC_KEY),
            "openai": Upstream("responses", f"http://127.0.0.1:{port}/v1", OPENAI_KEY),
        }
        with ModelProxy(ups) as proxy:
            a = proxy.register("anthropic", label="a", pricer=claude_price)
            o = proxy.register("openai", label="o", pricer=claude_price)
            status, headers, body = fetch(
                proxy.port,
                "/anthropic/v1/messages",
                messages("hi", True),
                {"x-api-key": a.placeholder},
            )
            assert status == 502 and ("x-should-retry", "true") in kept(headers)
            assert json.loads(body)["error"]["type"] == "api_error"
            assert b"could not be reached (ConnectionRefusedError" in body
            status, _, body = fetch(
                proxy.port,
                "/openai/responses",
                responses("hi"),
                {"Authorization": f"Bearer {o.placeholder}"},
            )
            assert status == 502 and json.loads(body)["error"]["type"] == "server_error"
            assert proxy.record(a)["requests"] == 1 and proxy.record(a)["unpriced"] == 0
