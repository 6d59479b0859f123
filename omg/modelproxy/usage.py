"""Pure: one answer's usage, read from the bytes of its stream or body as they pass.

The Messages API (claude) reports usage in ``message_start`` and, cumulatively, in each
``message_delta`` of a stream, or in a message's ``usage``; the Responses API (codex) in the
``response.completed`` (``.incomplete``, ``.failed``) event's response, or a response body's
``usage``. A reader is fed each chunk as the proxy forwards it and never holds more than the
event it is inside (a body past ``MAX_HELD`` bytes is not read: its usage is unknown).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

#: The two APIs the proxy speaks: Anthropic's Messages API, OpenAI's Responses API.
Api = Literal["messages", "responses"]
#: The most bytes one event (or a JSON body) may hold and still be read for its usage.
MAX_HELD = 32 * 1024 * 1024
#: The Messages API's token counts, read as they are named.
MESSAGES_COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
#: The streamed events that carry usage, by API.
USAGE_EVENTS: dict[Api, tuple[str, ...]] = {
    "messages": ("message_start", "message_delta"),
    "responses": ("response.completed", "response.incomplete", "response.failed"),
}
#: The streamed events that end an answer, by API (its usage is final then).
END_EVENTS: dict[Api, tuple[str, ...]] = {
    "messages": ("message_stop",),
    "responses": USAGE_EVENTS["responses"],
}


@dataclass(frozen=True)
class Usage:
    """One answer's usage: its model and counts, named as omg records them.

    Messages API: ``input_tokens``, ``output_tokens``, ``cache_creation_input_tokens`` (of
    which ``cache_creation_1h_input_tokens`` were written for an hour),
    ``cache_read_input_tokens``, ``web_search_requests``; ``speed`` ("fast") and ``geo``
    (``inference_geo``) change its price. Responses API: ``input_tokens`` (cached ones
    included), ``cached_input_tokens``, ``output_tokens``, ``reasoning_output_tokens`` — the
    names codex's own usage has.
    """

    api: Api
    model: str = ""
    counts: Mapping[str, int] = field(default_factory=dict)
    speed: str = ""
    geo: str = ""

    def tokens(self) -> int:
        """Every token the answer processed: its prompt (cached parts too) and its output."""
        c = self.counts
        prompt = c.get("input_tokens", 0)
        if self.api == "messages":
            prompt += c.get("cache_creation_input_tokens", 0) + c.get("cache_read_input_tokens", 0)
        return prompt + c.get("output_tokens", 0)


def _count(value: object) -> int | None:
    """A count as the API gives one: a non-negative integer (never a bool)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def messages_usage(raw: Mapping[str, Any], model: str, into: Usage | None = None) -> Usage:
    """A Messages API ``usage`` object read onto ``into`` (a stream's counts so far: each
    ``message_delta`` repeats the counts cumulatively, so a count given replaces the last)."""
    counts = dict(into.counts) if into is not None else {}
    speed, geo = (into.speed, into.geo) if into is not None else ("", "")
    for key in MESSAGES_COUNTS:
        if (n := _count(raw.get(key))) is not None:
            counts[key] = n
    for part, inner, name in (
        ("cache_creation", "ephemeral_1h_input_tokens", "cache_creation_1h_input_tokens"),
        ("server_tool_use", "web_search_requests", "web_search_requests"),
    ):
        nested = raw.get(part)
        if isinstance(nested, dict) and (n := _count(nested.get(inner))) is not None:
            counts[name] = n
    if isinstance(raw.get("speed"), str):
        speed = raw["speed"]
    if isinstance(raw.get("inference_geo"), str):
        geo = raw["inference_geo"]
    return Usage("messages", model or (into.model if into else ""), counts, speed, geo)


def responses_usage(raw: Mapping[str, Any], model: str) -> Usage:
    """A Responses API ``usage`` object, in codex's names."""
    counts: dict[str, int] = {}
    for key in ("input_tokens", "output_tokens"):
        if (n := _count(raw.get(key))) is not None:
            counts[key] = n
    for details, inner, name in (
        ("input_tokens_details", "cached_tokens", "cached_input_tokens"),
        ("output_tokens_details", "reasoning_tokens", "reasoning_output_tokens"),
    ):
        part = raw.get(details)
        if isinstance(part, dict) and (n := _count(part.get(inner))) is not None:
            counts[name] = n
    return Usage("responses", model, counts)


class Reader(Protocol):
    """Fed an answer's bytes as they pass; says the usage they reported (None: none seen),
    and whether the stream's last event passed (``done``: its usage is final)."""

    done: bool

    def feed(self, chunk: bytes) -> None: ...

    def usage(self) -> Usage | None: ...


def reader(api: Api, content_type: str, max_held: int = MAX_HELD) -> Reader:
    """The reader for an answer of ``api`` whose ``Content-Type`` is ``content_type``."""
    if content_type.split(";", 1)[0].strip().lower() == "text/event-stream":
        return EventReader(api, max_held)
    return BodyReader(api, max_held)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


class BodyReader:
    """A JSON body: held (up to ``MAX_HELD``) and read once it is whole."""

    def __init__(self, api: Api, max_held: int = MAX_HELD) -> None:
        self.api = api
        self.done = False  # a body is whole only at its end
        self.max_held = max_held
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size <= self.max_held:
            self._parts.append(chunk)
        else:
            self._parts.clear()

    def usage(self) -> Usage | None:
        if self._size > self.max_held:
            return None
        try:
            body = json.loads(b"".join(self._parts))
        except ValueError:
            return None
        if not isinstance(body, dict) or not isinstance(body.get("usage"), dict):
            return None
        if self.api == "messages":
            return messages_usage(body["usage"], _str(body.get("model")))
        return responses_usage(body["usage"], _str(body.get("model")))


class EventReader:
    """A stream of server-sent events: each event cut out whole, and only those that carry
    usage decoded (a cheap byte search first, so the many content deltas cost next to
    nothing)."""

    def __init__(self, api: Api, max_held: int = MAX_HELD) -> None:
        self.api = api
        self.done = False
        self.max_held = max_held
        self._names = tuple(n.encode() for n in USAGE_EVENTS[api] + END_EVENTS[api])
        self._held = b""
        self._searched = 0  # how far into _held no event boundary was found
        self._skipping = False  # inside an event past MAX_HELD: dropped up to its end
        self._usage: Usage | None = None

    def feed(self, chunk: bytes) -> None:
        held = self._held + chunk.replace(b"\r", b"")
        start = 0
        while (end := held.find(b"\n\n", max(start, self._searched - 1))) >= 0:
            if not self._skipping:
                self._event(held[start:end])
            self._skipping = False
            start, self._searched = end + 2, 0
        held = held[start:]
        self._searched = len(held)
        if len(held) > self.max_held:
            held, self._searched, self._skipping = b"", 0, True
        self._held = held

    def _event(self, block: bytes) -> None:
        if not any(name in block for name in self._names):
            return
        name, data = "", []
        for line in block.decode("utf-8", "replace").split("\n"):
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "event":
                name = value
            elif key == "data":
                data.append(value)
        try:
            ev = json.loads("\n".join(data))
        except ValueError:
            return
        if isinstance(ev, dict):
            self._read(name or _str(ev.get("type")), ev)

    def _read(self, name: str, ev: dict[str, Any]) -> None:
        if name in END_EVENTS[self.api]:
            self.done = True
        if self.api == "messages":
            if name == "message_start" and isinstance(ev.get("message"), dict):
                msg = ev["message"]
                if isinstance(msg.get("usage"), dict):
                    self._usage = messages_usage(msg["usage"], _str(msg.get("model")))
            elif name == "message_delta" and isinstance(ev.get("usage"), dict):
                self._usage = messages_usage(ev["usage"], "", self._usage)
        elif name in USAGE_EVENTS["responses"] and isinstance(ev.get("response"), dict):
            response = ev["response"]
            if isinstance(response.get("usage"), dict):
                self._usage = responses_usage(response["usage"], _str(response.get("model")))

    def usage(self) -> Usage | None:
        return self._usage
