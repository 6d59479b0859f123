"""A provider's limit is a pause, not a failure — with the real CLI against the stub model: a
subscription's session limit, and a rate limit that outlasts the CLI's own retries, leave the
node unsettled, pause the run with the kind of limit and the reset's words on record, and a
later leg (the limit reset) continues it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kit import omg_in_process

from .conftest import Env
from .test_failure_modes import rehearse

GRAPH = """\
name: g
nodes:
  - id: a
    prompt: do it
  - id: b
    depends_on: [a]
    prompt: then this
"""
ANSWERS = "rules:\n  - name: answers\n    reply: DONE\n"
SESSION = "rules:\n  - name: limited\n    error: {status: 429, limit: session, resets_in: 7200}\n"
RATE = "rules:\n  - name: throttled\n    error: {status: 429, retry_after: 0}\n"


@pytest.mark.parametrize(("script", "kind"), [(SESSION, "session"), (RATE, "rate")])
def test_a_limit_pauses_the_run_and_a_later_leg_continues_it(
    repo: Path, env: Env, script: str, kind: str
) -> None:
    environ = env(CLAUDE_CODE_MAX_RETRIES="1")
    done, state, events = rehearse(repo, environ, GRAPH, script)
    assert done.returncode == 4, done.stdout + done.stderr  # paused, not failed
    rec = state["nodes"]["a"]
    assert rec["verdict"] == "" and "b" not in state["nodes"], rec  # unsettled; nothing after
    leg = state["legs"][-1]
    assert (state["status"], leg["outcome"], leg["reason"]) == ("paused", "paused", "limit")
    wait = leg["wait"]
    assert (wait["node_id"], wait["kind"]) == ("a", kind)
    assert wait["not_before"] > leg["finished"][:19]  # a bound to poll from, never a parsed clock
    retried = [e for e in events if e["event"] == "node_retried"]
    assert [(e["reason"], e["limit"]) for e in retried] == [("limit", kind)]
    if kind == "session":
        assert "hit your session limit" in wait["said"]
        assert re.fullmatch(r"\d{1,2}:\d\d[ap]m", wait["resets"]), wait  # the words, kept
        assert retried[0]["resets"] == wait["resets"]
        assert "resets " + wait["resets"] in done.stdout
    else:
        assert "429" in wait["said"] and wait["resets"] == ""
    assert "Nothing failed" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("a "))
    assert " WAITING " in row  # the ledger: the execution waits, it did not fail
    assert f"⏸ a  {kind} limit reached — pausing the run" in done.stderr
    status = omg_in_process("status", cwd=repo, env=environ)
    assert "paused for a limit" in status.stdout

    (repo / "s.yaml").write_text(ANSWERS)  # the limit has reset
    argv = ("resume", "r", "--rehearse", "s.yaml")
    again = omg_in_process(*argv, cwd=repo, env=environ)
    assert again.returncode == 0, again.stdout + again.stderr
    after = json.loads((repo / ".omg" / "runs" / "r" / "state.json").read_text())
    assert after["status"] == "passed"
    assert [after["nodes"][n]["verdict"] for n in ("a", "b")] == ["PASS", "PASS"]
    assert after["nodes"]["a"]["attempts"] == 2  # the limited execution, then the one that ran
