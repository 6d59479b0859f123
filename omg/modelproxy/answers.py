"""Pure: the proxy's own answers — a refusal or a failure, as each API words an error.

The statuses are the ones each pinned CLI gives up on at once (found by pointing it at a
loopback server): claude 2.1.332 fails on 402 and 403 after one request, but retries a 401
for minutes and a 400 several times; codex 0.169.0 fails on 400 after one request and
reconnects on every other status. ``x-should-retry: false`` (which claude honours) says the
same to any Anthropic client. A failure to reach the model API is a 502 the CLIs retry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omg.modelproxy.executions import Why
    from omg.modelproxy.usage import Api

#: Each refusal's status and error type, by API.
REFUSALS: dict[Api, dict[Why, tuple[int, str]]] = {
    "messages": {
        "finished": (403, "permission_error"),
        "unknown": (403, "permission_error"),
        "upstream": (403, "permission_error"),
        "host": (403, "permission_error"),
        "budget": (402, "billing_error"),
        "tokens": (402, "billing_error"),
        "ceiling": (402, "billing_error"),
        "path": (404, "not_found_error"),
        "request": (400, "invalid_request_error"),
    },
    "responses": {
        "finished": (400, "invalid_request_error"),
        "unknown": (400, "invalid_request_error"),
        "upstream": (400, "invalid_request_error"),
        "host": (403, "invalid_request_error"),
        "budget": (400, "invalid_request_error"),
        "tokens": (400, "invalid_request_error"),
        "ceiling": (400, "invalid_request_error"),
        "path": (404, "invalid_request_error"),
        "request": (400, "invalid_request_error"),
    },
}


@dataclass(frozen=True)
class Answer:
    """A whole HTTP answer of the proxy's own."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def _answer(status: int, body: object, retry: bool) -> Answer:
    raw = json.dumps(body).encode()
    headers = (
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(raw))),
        ("x-should-retry", "true" if retry else "false"),
    )
    return Answer(status, headers, raw)


def error(api: Api, status: int, kind: str, message: str, code: str, retry: bool) -> Answer:
    """An error answer in ``api``'s own format."""
    if api == "messages":
        said = {"type": "error", "error": {"type": kind, "message": message}}
        return _answer(status, said, retry)
    body = {"error": {"message": message, "type": kind, "code": code, "param": None}}
    return _answer(status, body, retry)


def refusal(api: Api, why: Why, message: str) -> Answer:
    """A refused request: a status the API's CLI does not retry, and omg's message."""
    status, kind = REFUSALS[api][why]
    return error(api, status, kind, message, f"omg_{why}", retry=False)


def unreachable(api: Api, message: str) -> Answer:
    """The model API could not be reached or answered nothing: a 502 the CLI may retry."""
    kind = "api_error" if api == "messages" else "server_error"
    return error(api, 502, kind, message, "omg_unreachable", retry=True)
