"""The masker: secrets found by name and by declaration, masked in every form it knows."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from omg.mask import MASK, MIN_LENGTH, NOTHING, Masker
from omg.secretname import is_secret_name

TOKEN = "ghs_8Hq2ZkT0pLwX9vNc4RyA"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("ANTHROPIC_API_KEY", True),
        ("ANTHROPIC_AUTH_TOKEN", True),
        ("CLAUDE_CODE_OAUTH_TOKEN", True),
        ("OMG_GIT_TOKEN", True),
        ("MY_SERVICE_PASSWORD", True),
        ("aws_secret_access_key", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("PATH", False),
        ("GIT_AUTHOR_NAME", False),
        ("ANTHROPIC_BASE_URL", False),
        ("DEPLOY_URL", False),
    ],
)
def test_a_variable_is_secret_when_its_name_says_so(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_the_values_come_from_secret_names_and_from_the_names_a_graph_lists() -> None:
    env = {"GITHUB_TOKEN": TOKEN, "DEPLOY_URL": "https://u:p4ssw0rd@host", "HOME": "/home/me"}
    assert Masker.from_env(env).values == {TOKEN}
    assert Masker.from_env(env, ["DEPLOY_URL"]).values == {TOKEN, "https://u:p4ssw0rd@host"}


def test_a_value_shorter_than_the_minimum_is_not_masked() -> None:
    short = "x" * (MIN_LENGTH - 1)
    masker = Masker.from_env({"A_TOKEN": short, "B_TOKEN": "y" * MIN_LENGTH})
    assert masker.values == {"y" * MIN_LENGTH}
    assert masker.text(f"{short} {'y' * MIN_LENGTH}") == f"{short} {MASK}"


def basic(prefix: str) -> str:
    """What git sends for HTTPS auth: base64 of ``user:token``."""
    return base64.b64encode(f"{prefix}{TOKEN}".encode()).decode()


@pytest.mark.parametrize(
    "shown",
    [
        TOKEN,
        f"Authorization: Basic {basic('x-access-token:')}",  # 15-byte prefix: alignment 0
        f"Authorization: Basic {basic('x:')}",  # alignment 2
        f"Authorization: Basic {basic('oauth2:')}",  # alignment 1
        base64.urlsafe_b64encode(TOKEN.encode()).decode(),
        f"https://api.example.com/?t={quote(TOKEN + '/+', safe='')}",
        TOKEN.encode().hex(),
        TOKEN.encode().hex().upper(),
    ],
    ids=["raw", "basic-0", "basic-2", "basic-1", "urlsafe", "url", "hex", "HEX"],
)
def test_every_form_a_tool_prints_is_masked(shown: str) -> None:
    value = TOKEN + "/+" if "?t=" in shown else TOKEN
    out = Masker.of([value]).text(f"before {shown} after")
    assert MASK in out and out.startswith("before ") and out.endswith(" after")
    for form in (value, quote(value, safe="")):
        assert form not in out


@pytest.mark.parametrize(
    "shown",
    [
        "\n".join(TOKEN[i : i + 10] for i in range(0, len(TOKEN), 10)),  # fold -w 10
        TOKEN[:5] + "\r\n" + TOKEN[5:],
        TOKEN[:-1] + "\n" + TOKEN[-1],
    ],
    ids=["fold", "crlf", "last-char"],
)
def test_a_secret_split_across_lines_is_masked(shown: str) -> None:
    out = Masker.of([TOKEN]).text(f"before\n{shown}\nafter")
    assert out == f"before\n{MASK}\nafter"
    assert Masker.of([TOKEN]).data(f"x {shown} y".encode()) == f"x {MASK} y".encode()
    assert Masker.of([TOKEN]).record({"detail": [f"a {shown}"]}) == {"detail": [f"a {MASK}"]}


def test_a_value_with_quotes_is_masked_inside_json_text() -> None:
    value = 'pa"ss\\word-42'
    line = json.dumps({"reply": f"the password is {value}"})
    assert value not in json.loads(Masker.of([value]).text(line))["reply"]


def test_a_longer_secret_holding_a_shorter_one_is_masked_whole() -> None:
    inner, outer = "abcdefgh12", "prefix-abcdefgh12-suffix"
    assert Masker.of([inner, outer]).text(f"[{outer}]") == f"[{MASK}]"


def test_a_record_is_masked_in_values_and_keys_and_keeps_its_shape() -> None:
    masker = Masker.of([TOKEN])
    ev = {"event": "node_failed", "detail": f"exit 1: {TOKEN}", "usage": {TOKEN: 1}, "n": 3}
    out = masker.record(ev)
    assert out == {"event": "node_failed", "detail": f"exit 1: {MASK}", "usage": {MASK: 1}, "n": 3}
    assert ev["detail"] == f"exit 1: {TOKEN}"  # the caller's record is not changed


def test_a_clean_record_is_returned_as_it_is() -> None:
    ev = {"event": "node_passed", "detail": "fine"}
    assert Masker.of([TOKEN]).record(ev) is ev
    assert NOTHING.record(ev) is ev and NOTHING.text(TOKEN) == TOKEN


def test_bytes_are_masked_like_text() -> None:
    data = f'{{"out": "{TOKEN}"}}\n'.encode()
    assert Masker.of([TOKEN]).data(data) == f'{{"out": "{MASK}"}}\n'.encode()


def test_plus_adds_values_and_keeps_the_ones_it_had() -> None:
    one = Masker.of([TOKEN])
    both = one.plus(["another-secret-value"]).plus(Masker.of(["third-secret"]))
    assert both.values == {TOKEN, "another-secret-value", "third-secret"}
    assert one.plus([TOKEN]) is one and one.plus(["short"]) is one


@pytest.mark.parametrize(
    ("cut", "kept"),
    [
        (f"exit 1: …{TOKEN[9:]} refused", f"exit 1: …{MASK} refused"),  # process.tail's cut
        (f"head {TOKEN[:10]}\n[… omg cut 99 bytes of output here …]\n{TOKEN[-6:]} tail",
         f"head {MASK}\n[… omg cut 99 bytes of output here …]\n{MASK} tail"),
        (f"a piece too short to tell: …{TOKEN[-3:]}", f"a piece too short to tell: …{TOKEN[-3:]}"),
        ("an ellipsis… in plain words", "an ellipsis… in plain words"),
    ],
    ids=["tail", "capture", "short", "plain"],
)  # fmt: skip
def test_the_pieces_a_cut_leaves_of_a_secret_are_masked(cut: str, kept: str) -> None:
    assert Masker.of([TOKEN]).text(cut) == kept
