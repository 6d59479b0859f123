"""The proxy's own answers (pure): each refusal in its API's error format, with a status that
API's pinned CLI gives up on at once (tests/modelproxy/test_claude.py and test_codex.py watch
the CLIs do so), and a failure to reach the API as a 502 the CLIs retry."""

from __future__ import annotations

import json
from typing import get_args

import pytest

from omg.modelproxy.answers import REFUSALS, refusal, unreachable
from omg.modelproxy.executions import Why

WHYS = get_args(Why)


@pytest.mark.parametrize("why", WHYS)
def test_a_refusal_to_claude_is_an_anthropic_error_it_does_not_retry(why: Why) -> None:
    ans = refusal("messages", why, "omg: no")
    assert ans.status in (400, 402, 403, 404) and ans.status != 401  # 401: retried for minutes
    assert json.loads(ans.body) == {
        "type": "error",
        "error": {"type": REFUSALS["messages"][why][1], "message": "omg: no"},
    }
    assert ("x-should-retry", "false") in ans.headers
    assert ("Content-Length", str(len(ans.body))) in ans.headers


@pytest.mark.parametrize("why", WHYS)
def test_a_refusal_to_codex_is_an_openai_error_it_does_not_retry(why: Why) -> None:
    ans = refusal("responses", why, "omg: no")
    # 400 is the one status codex fails on without reconnecting; a Host or a path nothing
    # legitimate sends keeps its own status
    assert ans.status == {"host": 403, "path": 404}.get(why, 400)
    assert json.loads(ans.body) == {
        "error": {
            "message": "omg: no",
            "type": "invalid_request_error",
            "code": f"omg_{why}",
            "param": None,
        }
    }


def test_budget_refusals_say_billing_to_claude() -> None:
    for why in ("budget", "tokens", "ceiling"):
        assert REFUSALS["messages"][why] == (402, "billing_error")  # type: ignore[index]


def test_an_unreachable_api_is_a_502_the_cli_may_retry() -> None:
    for api, kind in (("messages", "api_error"), ("responses", "server_error")):
        ans = unreachable(api, "omg: down")  # type: ignore[arg-type]
        assert ans.status == 502 and ("x-should-retry", "true") in ans.headers
        assert kind in ans.body.decode()
