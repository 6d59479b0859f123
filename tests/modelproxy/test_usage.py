"""Usage read from the bytes of an answer as they pass (pure): both APIs, streamed and JSON,
however the bytes are cut, whatever the events' text holds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from omg.modelproxy.usage import Usage, reader

SSE = "text/event-stream"
JSON = "application/json"


def event(name: str, data: dict[str, Any], named: bool = True) -> bytes:
    head = f"event: {name}\n" if named else ""
    return f"{head}data: {json.dumps({'type': name, **data})}\n\n".encode()


START = {"message": {"id": "m", "model": "claude-opus-5-5", "usage": {
    "input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 30,
    "cache_read_input_tokens": 40, "cache_creation": {"ephemeral_1h_input_tokens": 20},
}}}  # fmt: skip
MESSAGES_STREAM = b"".join([
    event("message_start", START),
    event("ping", {}),
    event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
    event("content_block_delta", {"index": 0, "delta": {"type": "text_delta",
          "text": 'a "message_delta" said in text\n\nevent: message_delta'}}),
    event("content_block_stop", {"index": 0}),
    event("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {
        "output_tokens": 57, "server_tool_use": {"web_search_requests": 2},
        "speed": "fast", "inference_geo": "us"}}),
    event("message_stop", {}),
])  # fmt: skip
MESSAGES_USAGE = Usage(
    "messages",
    "claude-opus-5-5",
    {"input_tokens": 10, "output_tokens": 57, "cache_creation_input_tokens": 30,
     "cache_read_input_tokens": 40, "cache_creation_1h_input_tokens": 20,
     "web_search_requests": 2},
    speed="fast",
    geo="us",
)  # fmt: skip
#: The counts a stream reports in its message_start.
STARTED = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 30,
           "cache_read_input_tokens": 40, "cache_creation_1h_input_tokens": 20}  # fmt: skip
COMPLETED = {"response": {"id": "r", "model": "gpt-x", "status": "completed", "output": [],
    "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 60},
              "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 4},
              "total_tokens": 109}}}  # fmt: skip
RESPONSES_STREAM = b"".join([
    event("response.created", {"response": {"id": "r", "model": "gpt-x", "usage": None}}),
    event("response.output_text.delta", {"delta": "response.completed"}),
    event("response.completed", COMPLETED),
])  # fmt: skip
RESPONSES_USAGE = Usage(
    "responses",
    "gpt-x",
    {"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 9,
     "reasoning_output_tokens": 4},
)  # fmt: skip


def read(api: Any, content_type: str, data: bytes, cut: int = 0) -> Usage | None:
    r = reader(api, content_type)
    if cut:
        for at in range(0, len(data), cut):
            r.feed(data[at : at + cut])
    else:
        r.feed(data)
    return r.usage()


CASES: dict[str, tuple[str, str, bytes, Usage | None]] = {
    "messages stream": ("messages", SSE, MESSAGES_STREAM, MESSAGES_USAGE),
    "messages stream, CRLF lines": (
        "messages", SSE, MESSAGES_STREAM.replace(b"\n", b"\r\n"), MESSAGES_USAGE),
    "messages stream, events without names": (
        "messages", f"{SSE}; charset=utf-8",
        b"".join([event("message_start", START, named=False),
                  event("message_delta", {"usage": {"output_tokens": 5}}, named=False)]),
        Usage("messages", "claude-opus-5-5", {**STARTED, "output_tokens": 5})),
    "messages stream cut before its end": (
        "messages", SSE, event("message_start", START),
        Usage("messages", "claude-opus-5-5", STARTED)),
    "messages JSON": ("messages", JSON, json.dumps({"type": "message", "model": "claude-haiku-5-5",
        "usage": {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 5}}).encode(),
        Usage("messages", "claude-haiku-5-5",
              {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 5})),
    "count_tokens JSON has no usage": ("messages", JSON, b'{"input_tokens": 12}', None),
    "an error body has none": (
        "messages", JSON, b'{"type":"error","error":{"type":"rate_limit_error"}}', None),
    "a body that is not JSON": ("messages", JSON, b"<html>502</html>", None),
    "counts that are no counts are left out": ("messages", JSON, json.dumps({"model": "m",
        "usage": {"input_tokens": -1, "output_tokens": True, "cache_read_input_tokens": "9",
                  "cache_creation_input_tokens": 2.5}}).encode(), Usage("messages", "m", {})),
    "responses stream": ("responses", SSE, RESPONSES_STREAM, RESPONSES_USAGE),
    "responses stream, incomplete": (
        "responses", SSE, event("response.incomplete", COMPLETED), RESPONSES_USAGE),
    "responses stream, failed without usage": ("responses", SSE, event("response.failed",
        {"response": {"id": "r", "status": "failed", "usage": None}}), None),
    "responses JSON": ("responses", JSON, json.dumps(COMPLETED["response"]).encode(),
                       RESPONSES_USAGE),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("cut", [0, 1, 7, 64])
def test_usage_is_read_however_the_bytes_are_cut(case: str, cut: int) -> None:
    api, content_type, data, want = CASES[case]
    assert read(api, content_type, data, cut) == want


def test_a_stream_is_done_at_its_last_event_and_not_before() -> None:
    r = reader("messages", SSE)
    r.feed(MESSAGES_STREAM[: MESSAGES_STREAM.index(b"event: message_stop")])
    assert not r.done
    r.feed(MESSAGES_STREAM[MESSAGES_STREAM.index(b"event: message_stop") :])
    assert r.done
    r = reader("responses", SSE)
    r.feed(RESPONSES_STREAM[:-3])
    assert not r.done
    r.feed(RESPONSES_STREAM[-3:])
    assert r.done and r.usage() == RESPONSES_USAGE


def test_an_event_past_the_limit_is_dropped_and_the_next_still_read() -> None:
    big = event("content_block_delta", {"delta": {"text": "x" * 5000}})
    r = reader("messages", SSE, max_held=1000)
    for at in range(0, len(big), 100):
        r.feed(big[at : at + 100])
    r.feed(MESSAGES_STREAM)
    assert r.usage() == MESSAGES_USAGE
    body = reader("messages", JSON, max_held=10)
    body.feed(b'{"model": "m", "usage": {"input_tokens": 1}}')
    assert body.usage() is None


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        (MESSAGES_USAGE, 10 + 57 + 30 + 40),  # the prompt's cached parts count too
        (RESPONSES_USAGE, 100 + 9),  # input tokens count the cached ones already
        (Usage("messages"), 0),
    ],
)
def test_tokens_count_every_token_an_answer_processed(usage: Usage, tokens: int) -> None:
    assert usage.tokens() == tokens
