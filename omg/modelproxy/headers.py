"""Pure: the headers the proxy passes on — the placeholder a request presents, the request's
headers with omg's credential in its place, an answer's headers without hop-by-hop ones."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

Headers = list[tuple[str, str]]
#: The two ways a CLI presents its key: Anthropic's ``x-api-key`` (an API key), or
#: ``Authorization: Bearer`` (claude's OAuth token, and every OpenAI key).
Form = Literal["x-api-key", "bearer"]
#: Headers that belong to one connection, never passed on (RFC 9110 §7.6.1, and the proxy
#: ones); so are the headers a ``Connection`` header names.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
#: Request headers the proxy sets itself: the credential, the upstream's host, the framing of
#: the body it sends, and an identity encoding (so the answer's usage can be read).
REPLACED = frozenset(
    {"x-api-key", "authorization", "host", "content-length", "accept-encoding", "expect"}
)


def _dropped(headers: Iterable[tuple[str, str]]) -> set[str]:
    """The hop-by-hop names, with those a ``Connection`` header lists."""
    out = set(HOP_BY_HOP)
    for name, value in headers:
        if name.lower() == "connection":
            out.update(t.strip().lower() for t in value.split(",") if t.strip())
    return out


def presented(headers: Iterable[tuple[str, str]]) -> list[tuple[str, Form]]:
    """Every key the request presents, with the form it came in."""
    out: list[tuple[str, Form]] = []
    for name, value in headers:
        low = name.lower()
        if low == "x-api-key":
            out.append((value.strip(), "x-api-key"))
        elif low == "authorization":
            scheme, _, token = value.strip().partition(" ")
            if scheme.lower() == "bearer":
                out.append((token.strip(), "bearer"))
    return out


def credential(form: Form, key: str) -> tuple[str, str]:
    """omg's key as a header of the form the placeholder came in."""
    if form == "x-api-key":
        return ("x-api-key", key)
    return ("Authorization", f"Bearer {key}")


def outgoing(headers: Headers, placeholder: str, form: Form, key: str) -> Headers:
    """The request's headers as sent on: no hop-by-hop header, no header of the client's
    credential nor any that holds the placeholder, omg's credential in the same form."""
    dropped = _dropped(headers) | REPLACED
    out = [
        (name, value)
        for name, value in headers
        if name.lower() not in dropped and placeholder not in value
    ]
    out.append(("Accept-Encoding", "identity"))
    out.append(credential(form, key))
    return out


def incoming(headers: Headers) -> Headers:
    """An answer's headers as passed back: no hop-by-hop header and no ``Content-Length``
    (the proxy frames the body it sends itself)."""
    dropped = _dropped(headers) | {"content-length"}
    return [(name, value) for name, value in headers if name.lower() not in dropped]
