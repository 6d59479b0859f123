"""The headers the proxy passes on (pure): the key a request presents, the request's headers
with omg's key in the placeholder's place, an answer's headers without hop-by-hop ones."""

from __future__ import annotations

import pytest

from omg.modelproxy.headers import incoming, outgoing, presented

PLACEHOLDER = "omg-placeholder-123"


@pytest.mark.parametrize(
    ("headers", "keys"),
    [
        ([("X-Api-Key", "k1")], [("k1", "x-api-key")]),
        ([("authorization", "Bearer k2")], [("k2", "bearer")]),
        ([("Authorization", "bearer   k3 ")], [("k3", "bearer")]),
        ([("Authorization", "Basic eDp5")], []),
        (
            [("x-api-key", "a"), ("Authorization", "Bearer b")],
            [("a", "x-api-key"), ("b", "bearer")],
        ),
        ([("x-other", "Bearer c")], []),
    ],
)
def test_the_keys_a_request_presents(headers: list[tuple[str, str]], keys: list) -> None:
    assert presented(headers) == keys


REQUEST = [
    ("Host", "127.0.0.1:4000"),
    ("x-api-key", PLACEHOLDER),
    ("Authorization", "Bearer something-else"),
    ("Connection", "keep-alive, X-Hop"),
    ("X-Hop", "1"),
    ("Keep-Alive", "timeout=5"),
    ("Proxy-Authorization", "Basic eA=="),
    ("TE", "trailers"),
    ("Transfer-Encoding", "chunked"),
    ("Upgrade", "h2c"),
    ("Content-Length", "12"),
    ("Accept-Encoding", "gzip, br"),
    ("Expect", "100-continue"),
    ("X-Custom", f"note={PLACEHOLDER}"),
    ("anthropic-version", "2023-06-01"),
    ("anthropic-beta", "a,b"),
    ("User-Agent", "claude-cli/2.1.332"),
]


@pytest.mark.parametrize(
    ("form", "credential"),
    [("x-api-key", ("x-api-key", "REAL")), ("bearer", ("Authorization", "Bearer REAL"))],
)
def test_the_request_goes_on_with_omgs_key_in_the_placeholders_form(
    form: str, credential: tuple[str, str]
) -> None:
    sent = outgoing(REQUEST, PLACEHOLDER, form, "REAL")  # type: ignore[arg-type]
    assert sent == [
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "a,b"),
        ("User-Agent", "claude-cli/2.1.332"),
        ("Accept-Encoding", "identity"),
        credential,
    ]


def test_an_answer_comes_back_without_its_hop_by_hop_headers() -> None:
    answer = [
        ("Content-Type", "text/event-stream"),
        ("Connection", "close, X-Trace"),
        ("X-Trace", "abc"),
        ("Keep-Alive", "timeout=5"),
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "99"),
        ("retry-after", "7"),
        ("anthropic-ratelimit-requests-remaining", "49"),
        ("x-ratelimit-remaining-tokens", "1000"),
        ("request-id", "req_1"),
    ]
    assert incoming(answer) == [
        ("Content-Type", "text/event-stream"),
        ("retry-after", "7"),
        ("anthropic-ratelimit-requests-remaining", "49"),
        ("x-ratelimit-remaining-tokens", "1000"),
        ("request-id", "req_1"),
    ]
