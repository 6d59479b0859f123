"""omg's real keys, planted as canaries, never come back: not in an answer (forwarded, refused
or failed), a record, a refusal's words, a repr, an error, or anything the proxy prints; and
the proxy reads no key from the environment — the caller hands them in."""

from __future__ import annotations

import ast
import http.client
import json
import socket
from pathlib import Path

import pytest
from canaries import Search, canary

from omg.modelproxy import ModelProxy, Upstream
from omg.runners.claude.prices import price as claude_price
from omg.stubmodel import StubModel
from omg.stubmodel.script import build

from .conftest import ANTHROPIC_KEY, OPENAI_KEY

PACKAGE = Path(__file__).resolve().parents[2] / "omg" / "modelproxy"
SCRIPT = {"rules": [
    {"name": "refused", "when": {"prompt": "^refuse"},
     "error": {"status": 401, "message": "invalid x-api-key"}},
    {"name": "limited", "when": {"prompt": "^limit"},
     "error": {"status": 429, "retry_after": 1, "limit": "session"}},
    {"name": "ok", "reply": "fine"},
]}  # fmt: skip


def ask(port: int, path: str, body: object, headers: dict[str, str], host: str = "") -> bytes:
    """Everything a client gets back for one request: status line, headers, body."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    if host:
        conn.putrequest("POST", path, skip_host=True)
        conn.putheader("Host", host)
        raw = json.dumps(body).encode()
        for k, v in {**headers, "Content-Length": str(len(raw))}.items():
            conn.putheader(k, v)
        conn.endheaders(raw)
    else:
        conn.request("POST", path, json.dumps(body).encode(), headers)
    resp = conn.getresponse()
    head = f"{resp.status} {resp.reason}\n" + "".join(f"{k}: {v}\n" for k, v in resp.getheaders())
    out = head.encode() + resp.read()
    conn.close()
    return out


def messages(prompt: str, stream: bool = True) -> dict[str, object]:
    return {"model": "claude-opus-5-5", "stream": stream,
            "messages": [{"role": "user", "content": prompt}]}  # fmt: skip


def responses(prompt: str) -> dict[str, object]:
    return {"model": "m", "stream": True, "input": prompt}


def test_no_key_comes_back_in_anything_the_proxy_returns_or_records(
    stub: StubModel, proxy: ModelProxy, capfd: pytest.CaptureFixture[str]
) -> None:
    stub.script = build(SCRIPT, "s")
    search = Search({"the Anthropic key": ANTHROPIC_KEY, "the OpenAI key": OPENAI_KEY})
    a = proxy.register("anthropic", label="a", pricer=claude_price, ceiling=1e-9)
    o = proxy.register("openai", label="o", pricer=lambda u: None)
    done = proxy.register("anthropic", label="done", pricer=claude_price)
    proxy.finish(done)
    ak, ok = {"x-api-key": a.placeholder}, {"Authorization": f"Bearer {o.placeholder}"}
    port = proxy.port
    answers = {
        "a stream": ask(port, "/anthropic/v1/messages", messages("hi"), ak),
        "the API refusing the key": ask(port, "/anthropic/v1/messages", messages("refuse"), ak),
        "a usage limit": ask(port, "/anthropic/v1/messages", messages("limit"), ak),
        "past the ceiling": ask(port, "/anthropic/v1/messages", messages("hi"), ak),
        "a finished key": ask(
            port, "/anthropic/v1/messages", messages("hi"), {"x-api-key": done.placeholder}
        ),
        "an unknown key": ask(port, "/anthropic/v1/messages", messages("hi"), {"x-api-key": "x"}),
        "the real key itself": ask(
            port, "/anthropic/v1/messages", messages("hi"), {"x-api-key": ANTHROPIC_KEY}
        ),
        "a foreign Host": ask(port, "/anthropic/v1/messages", messages("hi"), ak, "evil.test"),
        "a path not forwarded": ask(port, "/anthropic/v1/messages/batches", {}, ak),
        "a responses stream": ask(port, "/openai/responses", responses("hi"), ok),
        "a responses 401": ask(port, "/openai/responses", responses("refuse"), ok),
        "the other API's path": ask(port, "/openai/responses", responses("hi"), ak),
    }
    for what, got in answers.items():
        search.bytes(what, got)
    assert (
        b"fine" in answers["a stream"]
        and b"omg: this key is not one" in answers["the real key itself"]
    )
    for grant in (a, o, done):
        search.text(f"the record of {grant.label}", json.dumps(proxy.finish(grant)))
        search.text(f"the grant of {grant.label}", repr(grant))
    search.text("the strays", json.dumps(proxy.strays))
    search.text("the proxy", repr(proxy) + repr(proxy.upstreams))
    out, err = capfd.readouterr()
    search.text("what the process printed", out + err)
    assert not search.leaks, search.report()
    assert proxy.strays == {"unknown": 2, "host": 1}


def test_an_unreachable_api_does_not_quote_the_key() -> None:
    key = canary("down")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        with ModelProxy({"anthropic": Upstream("messages", url, key)}) as proxy:
            grant = proxy.register("anthropic", label="a", pricer=claude_price)
            got = ask(
                proxy.port,
                "/anthropic/v1/messages",
                messages("hi"),
                {"x-api-key": grant.placeholder},
            )
    search = Search({"the key": key})
    search.bytes("a 502", got)
    assert got.startswith(b"502") and not search.leaks, search.report()


@pytest.mark.parametrize("bad", ["", "two words", "line\nbreak", "tab\t", "é"])
def test_a_key_a_header_cannot_carry_is_refused_without_being_shown(bad: str) -> None:
    key = canary("bad") + bad if bad else ""
    with pytest.raises(ValueError, match=r"the key for https://api\.anthropic\.com") as raised:
        Upstream("messages", "https://api.anthropic.com", key)
    assert not key or key not in str(raised.value)


def test_an_upstream_never_shows_its_key() -> None:
    key = canary("ok")
    assert key not in repr(Upstream("messages", "https://api.anthropic.com", key))


def test_the_proxy_reads_no_environment() -> None:
    """The real keys are the caller's to hand in, read once from omg's own memory."""
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
                assert "os" not in names, f"{path.name} imports os"
            if isinstance(node, (ast.Name, ast.Attribute)):
                name = node.id if isinstance(node, ast.Name) else node.attr
                assert name not in ("environ", "getenv", "environb"), f"{path.name}: {name}"
