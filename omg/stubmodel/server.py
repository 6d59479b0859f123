"""The stand-in server: enough of the Anthropic Messages API for the claude CLI, on loopback.

``POST /v1/messages`` (streamed as server-sent events, or one JSON message),
``POST /v1/messages/count_tokens`` (and ``POST /v1/responses`` for codex: ``responses``); every
answer comes from the script's first matching rule,
with plausible ``usage`` so the CLI prices the session. Standard library only.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, NotRequired, TypedDict

from omg.runners.base import ATTEMPT_HEADER, NODE_HEADER, ROUND_HEADER
from omg.runners.registry import STUB_APIS
from omg.stubmodel import responses
from omg.stubmodel.script import Failure, Request, Rule, Script, Turn, unmatched_text

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class Usage(TypedDict):
    """A message's token usage, as the API reports it (the CLI prices the session by it)."""

    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cache_creation: NotRequired[dict[str, int]]  # the part written for an hour, and for 5 min
    server_tool_use: NotRequired[dict[str, int]]  # web searches
    speed: NotRequired[str]  # "fast": served at fast-mode speed
    inference_geo: NotRequired[str]  # "us": served in the US only


class TextBlock(TypedDict):
    """A text content block."""

    type: Literal["text"]
    text: str


class ToolUseBlock(TypedDict):
    """A tool call content block: the CLI runs the tool and asks again."""

    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, object]  # the script's tool input, passed through as written


class Message(TypedDict):
    """An assistant message, as the Messages API answers one."""

    id: str
    type: Literal["message"]
    role: Literal["assistant"]
    model: str
    content: list[TextBlock | ToolUseBlock]
    stop_reason: str | None
    stop_sequence: None
    usage: Usage


class ApiError(TypedDict):
    """The error of an API error answer."""

    type: str
    message: str


class ErrorBody(TypedDict):
    """An API error answer's body."""

    type: Literal["error"]
    error: ApiError


@dataclass
class Seen:
    """One request as the stand-in saw it, for tests and `omg stub-model`'s log."""

    request: Request
    rule: str  # the rule that answered, or "" for the default answer
    status: int
    headers: tuple[tuple[str, str], ...] = ()  # as they arrived (a proxy's, tests check them)


@dataclass
class StubModel:
    """The server and what it saw; ``serve`` runs it on a thread for a ``with`` block."""

    script: Script
    port: int = 0
    seen: list[Seen] = field(default_factory=list)
    _calls: dict[str, int] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def answer(
        self, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> tuple[Rule | None, Request]:
        headers = {k.lower(): v for k, v in headers.items()}  # HTTP headers ignore case
        node = headers.get(NODE_HEADER.lower(), "")
        with self._lock:
            self._calls[node] = self._calls.get(node, 0) + 1
            call = self._calls[node]
        messages = body.get("messages") or []
        req = Request(
            node=node,
            round=_int(headers.get(ROUND_HEADER.lower())),
            attempt=_int(headers.get(ATTEMPT_HEADER.lower())),
            prompt=_first_user_text(messages),
            turn=sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant"),
            call=call,
            runtime=STUB_APIS["messages"],
        )
        return self.script.match(req), req

    def answer_responses(
        self, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> tuple[Rule | None, Request]:
        """``answer`` for a Responses API request (codex): its prompt and tool-call turn."""
        headers = {k.lower(): v for k, v in headers.items()}
        node = headers.get(NODE_HEADER.lower(), "")
        with self._lock:
            self._calls[node] = self._calls.get(node, 0) + 1
            call = self._calls[node]
        prompt, turn = responses.prompt_and_turn(body)
        req = Request(
            node=node,
            round=_int(headers.get(ROUND_HEADER.lower())),
            attempt=_int(headers.get(ATTEMPT_HEADER.lower())),
            prompt=prompt,
            turn=turn,
            call=call,
            runtime=STUB_APIS["responses"],
        )
        return self.script.match(req), req

    def next_id(self) -> int:
        return next(self._ids)

    def message(self, rule: Rule | None, req: Request, model: str) -> Message:
        """The assistant message a rule gives for this turn (the default when none matched)."""
        if rule is None:
            turn = Turn(text=unmatched_text(self.script, req))
        elif rule.empty:
            turn = Turn()
        else:
            turn = rule.turns[min(req.turn, len(rule.turns) - 1)]
        content: list[TextBlock | ToolUseBlock] = []
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        if turn.tool:
            n = next(self._ids)
            tool_id = f"toolu_omg{n:06d}"
            content.append(
                {"type": "tool_use", "id": tool_id, "name": turn.tool, "input": dict(turn.input)}
            )
        usage = _usage(turn, req)
        return {
            "id": f"msg_omg{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if turn.tool else "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }

    @contextmanager
    def serve(self) -> Iterator[StubModel]:
        server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self))
        server.daemon_threads = True
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.daemon = True
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _usage(turn: Turn, req: Request) -> Usage:
    """A turn's usage as the Messages API reports it: the script's counts (cache reads and
    writes, the part written for an hour, web searches, speed and region too), else about a
    token per four characters."""
    given = turn.usage
    text_size = len(turn.text) + 20 * bool(turn.tool)
    usage: Usage = {
        "input_tokens": int(given.get("input_tokens", max(1, len(req.prompt) // 4))),
        "output_tokens": int(given.get("output_tokens", max(1, text_size // 4))),
        "cache_creation_input_tokens": int(given.get("cache_creation_input_tokens", 0)),
        "cache_read_input_tokens": int(given.get("cache_read_input_tokens", 0)),
    }
    if "cache_creation_1h_input_tokens" in given:
        hour = int(given["cache_creation_1h_input_tokens"])
        usage["cache_creation"] = {
            "ephemeral_1h_input_tokens": hour,
            "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"] - hour,
        }
    if "web_search_requests" in given:
        usage["server_tool_use"] = {"web_search_requests": int(given["web_search_requests"])}
    if "speed" in given:
        usage["speed"] = str(given["speed"])
    if "inference_geo" in given:
        usage["inference_geo"] = str(given["inference_geo"])
    return usage


def _first_user_text(messages: list[Any]) -> str:
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "\n".join(
                    str(c.get("text", ""))
                    for c in content
                    if isinstance(c, dict) and c.get("type") == "text"
                )
    return ""


def _error_body(fail: Failure) -> ErrorBody:
    kind = _ERROR_TYPES.get(fail.status, "api_error")
    return {
        "type": "error",
        "error": {"type": kind, "message": fail.message or kind.replace("_", " ")},
    }


#: The claim each scripted usage limit stands for, as the unified rate-limit headers name it.
_LIMIT_CLAIMS = {"session": "five_hour", "weekly": "seven_day"}


def _with_reset(fail: Failure) -> Failure:
    """A scripted usage limit answered as a subscriber sees it, reset clock included ("You've
    hit your session limit · resets 3pm (UTC)"), unless the script words the message itself."""
    if fail.limit is None or fail.message:
        return fail
    reset = time.time() + (3600.0 if fail.resets_in is None else fail.resets_in)
    clock = time.strftime("%I:%M%p", time.gmtime(reset)).lstrip("0").lower()
    said = f"You've hit your {fail.limit} limit · resets {clock} (UTC)"
    return replace(fail, message=said)


def _error_headers(fail: Failure) -> dict[str, str]:
    """An API error answer's headers: retry-after, and a subscription limit's unified headers."""
    out = {"x-should-retry": "true"}
    if fail.retry_after is not None:
        out["retry-after"] = f"{fail.retry_after:g}"
    if fail.limit is not None:
        reset = time.time() + (3600.0 if fail.resets_in is None else fail.resets_in)
        out.update(
            {
                "x-should-retry": "false",
                "anthropic-ratelimit-unified-status": "rejected",
                "anthropic-ratelimit-unified-representative-claim": _LIMIT_CLAIMS[fail.limit],
                "anthropic-ratelimit-unified-reset": str(int(reset)),
            }
        )
    return out


def _sse(message: Message) -> Iterator[bytes]:
    """A message as the stream of events the API sends for it."""

    def event(name: str, data: Mapping[str, object]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    start: Message = {**message, "content": [], "stop_reason": None}
    start["usage"] = {**message["usage"], "output_tokens": 1}
    yield event("message_start", {"type": "message_start", "message": start})
    yield event("ping", {"type": "ping"})
    for i, block in enumerate(message["content"]):
        opened: TextBlock | ToolUseBlock
        if block["type"] == "text":
            opened = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield event(
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": opened},
        )
        yield event(
            "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        )
        yield event("content_block_stop", {"type": "content_block_stop", "index": i})
    yield event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield event("message_stop", {"type": "message_stop"})


def _handler(stub: StubModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no wait between

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _json(self, status: int, data: Any, headers: Mapping[str, str] = {}) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def _heard(self) -> tuple[tuple[str, str], ...]:
            return tuple(self.headers.items())

        def do_GET(self) -> None:
            self._json(404, _error_body(Failure(404, f"the stub model has no GET {self.path}")))

        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(size) or b"{}")
            except ValueError:
                self._json(400, _error_body(Failure(400, "the request body is not JSON")))
                return
            path = self.path.split("?", 1)[0]
            if path.endswith("/count_tokens"):
                text = json.dumps(body.get("messages", []))
                self._json(200, {"input_tokens": max(1, len(text) // 4)})
                return
            if responses.is_responses(path):
                self._responses(body)
                return
            if not path.endswith("/v1/messages"):
                self._json(404, _error_body(Failure(404, f"the stub model has no POST {path}")))
                return
            rule, req = stub.answer(dict(self.headers.items()), body)
            if rule is not None and rule.hang_s:
                time.sleep(rule.hang_s)
            if rule is not None and rule.error is not None:
                stub.seen.append(Seen(req, rule.name, rule.error.status, self._heard()))
                fail = _with_reset(rule.error)
                self._json(fail.status, _error_body(fail), _error_headers(fail))
                return
            stub.seen.append(Seen(req, rule.name if rule else "", 200, self._heard()))
            message = stub.message(rule, req, str(body.get("model") or "claude-stub"))
            if not body.get("stream"):
                self._json(200, message)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in _sse(message):
                self.wfile.write(chunk)
            self.wfile.flush()
            self.close_connection = True

        def _responses(self, body: Mapping[str, Any]) -> None:
            rule, req = stub.answer_responses(dict(self.headers.items()), body)
            if rule is not None and rule.hang_s:
                time.sleep(rule.hang_s)
            model, rid = str(body.get("model") or "codex-stub"), f"resp_omg{stub.next_id():06d}"
            fail = rule.error if rule is not None else None
            if fail is not None and not fail.message.startswith(responses.CONTEXT_CODE):
                stub.seen.append(Seen(req, rule.name if rule else "", fail.status, self._heard()))
                extra = {} if fail.retry_after is None else {"retry-after": f"{fail.retry_after:g}"}
                self._json(fail.status, responses.error_body(fail), extra)
                return
            stub.seen.append(Seen(req, rule.name if rule else "", 200, self._heard()))
            if fail is not None:
                chunks = responses.failed(rid, model, responses.CONTEXT_CODE, fail.message)
            else:
                if rule is None:
                    turn = Turn(text=unmatched_text(stub.script, req))
                elif rule.empty:
                    turn = Turn()
                else:
                    turn = rule.turns[min(req.turn, len(rule.turns) - 1)]
                items = responses.output_items(turn, responses.code_mode(body), stub.next_id())
                chunks = responses.sse(rid, model, items, responses.usage(turn, req.prompt))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)
            self.wfile.flush()
            self.close_connection = True

    return Handler
