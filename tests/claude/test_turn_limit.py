"""The turn limit with the real CLI: max_turns reaches claude as --max-turns, an attempt stopped
there fails with cause turn_limit, and a retry on it continues the same session."""

from __future__ import annotations

import json
from pathlib import Path

from kit import omg_in_process

from .conftest import Env

GRAPH = """\
name: g
nodes:
  - id: a
    prompt: write the notes file, then say DONE
    allowed_tools: [Write]
    max_turns: 1
    success_check: {result_matches: '^DONE$'}
    retry: {max: 1, on: [turn_limit]}
"""

#: Turn k answers a conversation already holding k assistant messages: a fresh session would
#: get the tool call again (and stop at the limit again); a continued one gets the answer.
SCRIPT = """\
rules:
  - name: a tool call, then the answer
    when: {node: a}
    turns:
      - {tool: Write, input: {file_path: notes.txt, content: "first attempt's work\\n"}}
      - {text: DONE}
"""


def events(repo: Path, rid: str) -> list[dict[str, object]]:
    lines = (repo / ".omg" / "runs" / rid / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_turn_limited_attempt_is_retried_by_continuing_its_session(repo: Path, env: Env) -> None:
    (repo / "g.yaml").write_text(GRAPH)
    (repo / "s.yaml").write_text(SCRIPT)
    done = omg_in_process("run", "g.yaml", "--run-id", "t", "--rehearse", "s.yaml",
                          cwd=repo, env=env())  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    evs = events(repo, "t")
    [started] = [e for e in evs if e["event"] == "node_started"]
    [retried] = [e for e in evs if e["event"] == "node_retried"]
    [passed] = [e for e in evs if e["event"] == "node_passed"]
    assert retried["cause"] == "turn_limit"
    assert "turn limit" in str(retried["detail"])
    # one session throughout: the retry resumed it, not forked, not fresh
    assert started["session_id"] == retried["session_id"] == passed["session_id"]
    assert (repo / "notes.txt").read_text() == "first attempt's work\n"
    assert (repo / ".omg" / "runs" / "t" / "artifacts" / "a.out").read_text() == "DONE"
    # the continued attempt is priced by its own turn, not the whole session again
    assert 0 < float(str(passed["cost_usd"])) < float(str(passed["session_cost_usd"]))


def test_without_a_retry_the_turn_limit_is_its_own_cause(repo: Path, env: Env) -> None:
    (repo / "g.yaml").write_text(GRAPH.replace("    retry: {max: 1, on: [turn_limit]}\n", ""))
    (repo / "s.yaml").write_text(SCRIPT)
    done = omg_in_process("run", "g.yaml", "--run-id", "u", "--rehearse", "s.yaml",
                          cwd=repo, env=env())  # fmt: skip
    assert done.returncode == 1, done.stderr + done.stdout
    [failed] = [e for e in events(repo, "u") if e["event"] == "node_failed"]
    assert failed["cause"] == "turn_limit"
    assert "Reached maximum number of turns (1)" in str(failed["detail"])
