"""What omg's loopback model-API proxy adds to a request: the stub model asked straight and
through the proxy, interleaved (one straight, one proxied, over and over, so a neighbour's
load shifts both), on keep-alive connections as the CLIs hold them.

  1. many small requests: a JSON message (a 1 KB request) — median and p95 of each path and
     of the per-pair difference;
  2. a request as big as the CLIs send (about 50 KB of conversation), the same way;
  3. a streamed answer (server-sent events): the time to its first byte, and to its end;
     the stub ends each stream by closing its connection, so straight to it every stream
     opens one, while the CLI's connection to the proxy is kept (the proxy opens one to the
     stub per stream, as the direct path does).

    python bench/proxy.py [--quick] [--requests N]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from common import report  # noqa: E402

from omg.modelproxy import ModelProxy, Upstream  # noqa: E402
from omg.runners.claude.prices import price as claude_price  # noqa: E402
from omg.stubmodel import StubModel  # noqa: E402
from omg.stubmodel.script import build  # noqa: E402

KEY = "sk-bench-not-a-key"
SCRIPT = {"rules": [{"name": "answer", "reply": "DONE"}]}


def body(size: int, stream: bool) -> bytes:
    """A Messages API request of about ``size`` bytes."""
    text = "x" * max(0, size - 200)
    return json.dumps({
        "model": "claude-opus-5-5", "max_tokens": 64, "stream": stream,
        "messages": [{"role": "user", "content": text}],
    }).encode()  # fmt: skip


class Client:
    """One keep-alive connection, as a CLI holds one."""

    def __init__(self, port: int, prefix: str, headers: dict[str, str]) -> None:
        self.port, self.prefix, self.headers = port, prefix, headers
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def ask(self, data: bytes) -> float:
        """Seconds from sending the request to having the whole answer."""
        t0 = time.perf_counter()
        self.conn.request("POST", f"{self.prefix}/v1/messages", data, self.headers)
        resp = self.conn.getresponse()
        got = resp.read()
        took = time.perf_counter() - t0
        if resp.status != 200 or b"DONE" not in got:
            raise SystemExit(f"unexpected answer {resp.status}: {got[:300]!r}")
        return took

    def stream(self, data: bytes) -> tuple[float, float]:
        """Seconds to the first byte of a streamed answer's body, and to its end. The stub
        closes a stream's connection, so straight to it each stream opens one; the proxy
        frames the stream itself and keeps the client's connection, as a CLI holds it."""
        t0 = time.perf_counter()
        self.conn.request("POST", f"{self.prefix}/v1/messages", data, self.headers)
        resp = self.conn.getresponse()
        first = resp.read1(1)
        t_first = time.perf_counter() - t0
        rest = resp.read()
        t_end = time.perf_counter() - t0
        if not first or b"message_stop" not in first + rest:
            raise SystemExit("the stream did not end with message_stop")
        return t_first, t_end


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def paired(n: int, direct: Callable[[], float], proxied: Callable[[], float]) -> dict[str, Any]:
    """``n`` interleaved pairs (their order alternating): medians and p95 in milliseconds."""
    a, b = [], []
    for i in range(n):
        if i % 2:
            b.append(proxied())
            a.append(direct())
        else:
            a.append(direct())
            b.append(proxied())
    diff = [y - x for x, y in zip(a, b, strict=True)]

    def ms(values: list[float]) -> dict[str, float]:
        return {"median_ms": statistics.median(values) * 1e3, "p95_ms": p95(values) * 1e3}

    return {"n": n, "direct": ms(a), "proxy": ms(b), "added": ms(diff)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke: few requests")
    parser.add_argument("--requests", type=int, default=2000, help="pairs of small requests")
    args = parser.parse_args()
    n = 40 if args.quick else args.requests
    streams = 20 if args.quick else max(200, n // 10)
    stub = StubModel(build(SCRIPT, "bench"))
    results: dict[str, Any] = {}
    with stub.serve():
        ups = {"anthropic": Upstream("messages", stub.url, KEY)}
        with ModelProxy(ups) as proxy:
            grant = proxy.register("anthropic", label="bench", pricer=claude_price)
            direct = Client(int(stub.url.rsplit(":", 1)[1]), "", {"x-api-key": KEY})
            behind = Client(proxy.port, "/anthropic", {"x-api-key": grant.placeholder})
            for warm in (direct, behind):  # connections open, code paths warm
                for _ in range(20):
                    warm.ask(body(1000, False))
            small, large = body(1000, False), body(50_000, False)
            results["small"] = paired(n, lambda: direct.ask(small), lambda: behind.ask(small))
            results["large"] = paired(
                max(20, n // 4), lambda: direct.ask(large), lambda: behind.ask(large)
            )
            sse = body(1000, True)
            firsts: dict[str, list[float]] = {"direct": [], "proxy": []}
            ends: dict[str, list[float]] = {"direct": [], "proxy": []}
            for i in range(streams):
                order = (("direct", direct), ("proxy", behind))
                for name, client in order if i % 2 == 0 else order[::-1]:
                    first, end = client.stream(sse)
                    firsts[name].append(first)
                    ends[name].append(end)
            record = proxy.finish(grant)
    results["stream"] = {
        "n": streams,
        **{
            f"{what}_{name}": {
                "median_ms": statistics.median(v[name]) * 1e3,
                "p95_ms": p95(v[name]) * 1e3,
            }
            for what, v in (("first_byte", firsts), ("end", ends))
            for name in ("direct", "proxy")
        },
    }
    results["proxy_requests"] = record["requests"]
    rows = []
    for case, label in (("small", "1 KB JSON request"), ("large", "50 KB JSON request")):
        r = results[case]
        rows.append((
            f"{label} (n={r['n']})",
            f"{r['direct']['median_ms']:.2f} / {r['direct']['p95_ms']:.2f}",
            f"{r['proxy']['median_ms']:.2f} / {r['proxy']['p95_ms']:.2f}",
            f"{r['added']['median_ms']:.2f} / {r['added']['p95_ms']:.2f}",
        ))  # fmt: skip
    s = results["stream"]
    for what, label in (
        ("first_byte", "streamed answer, first byte"),
        ("end", "streamed answer, end"),
    ):
        d, p = s[f"{what}_direct"], s[f"{what}_proxy"]
        rows.append((
            f"{label} (n={streams})",
            f"{d['median_ms']:.2f} / {d['p95_ms']:.2f}",
            f"{p['median_ms']:.2f} / {p['p95_ms']:.2f}",
            f"{p['median_ms'] - d['median_ms']:.2f} / -",
        ))  # fmt: skip
    report(
        "proxy",
        "The model proxy: straight to the stub model vs through the proxy (ms, median / p95)",
        ("request", "direct", "through the proxy", "added"),
        rows,
        results,
    )


if __name__ == "__main__":
    main()
