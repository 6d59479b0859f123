"""A leg masks what it records: events (state.json is their fold), artifacts, failed replies and
feedback payloads; a secret input is never recorded and is given again to a later leg."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omg.errors import InputError
from omg.graph.load import load_graph
from omg.leg.decisions import Decision
from omg.leg.loop import LegOptions
from omg.leg.start import Environment, resume_run, start_run
from omg.mask import MASK, Masker
from omg.state.store import RunDir

TOKEN = "ghs_legMaskCanary0123456789"
URL = "https://user:hunter2hunter2@deploy.example"  # named secret by the graph, not its name
KEY = "input-canary-key-4242"

GRAPH = """\
name: masked
on_fail: continue
secrets: [DEPLOY_URL]
inputs:
  key: {secret: true}
  plain: {default: visible-input-value}
nodes:
  - id: loud
    env: [GITHUB_TOKEN, DEPLOY_URL]
    run: |
      echo "$GITHUB_TOKEN $DEPLOY_URL {{ inputs.key }} {{ inputs.plain }}"
      echo "{{ inputs.key }}" > "%(out)s/loud-saw"
  - id: broken
    env: [GITHUB_TOKEN]
    run: 'echo "$GITHUB_TOKEN refused"; echo "$GITHUB_TOKEN refused" >&2; exit 1'
  - {id: impl, run: 'echo impl'}
  - id: review
    depends_on: [impl]
    env: [DEPLOY_URL]
    run: 'echo "findings: $DEPLOY_URL"'
    success_check:
      verify: {command: 'test -f "%(out)s/fixed" || { touch "%(out)s/fixed"; exit 1; }'}
    feedback: {rerun: impl, max: 1}
  - {id: ok, type: gate, depends_on: [loud, review]}
  - id: later
    depends_on: [ok]
    run: 'echo "{{ inputs.key }}" > "%(out)s/later-saw"'
"""


def setup(tmp_path: Path) -> tuple[Environment, Path]:
    out = tmp_path / "out"
    out.mkdir()
    path = tmp_path / "g.yaml"
    path.write_text(GRAPH % {"out": out})
    parent = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GITHUB_TOKEN": TOKEN,
              "DEPLOY_URL": URL}  # fmt: skip
    env = Environment(
        runs_dir=tmp_path / ".omg" / "runs",
        root=tmp_path,
        parent_env=parent,
        mask=Masker.from_env(parent),
    )
    return env, out


def everything(run: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(run.rglob("*")) if p.is_file())


def test_what_a_leg_records_is_masked_and_the_state_is_its_fold(tmp_path: Path) -> None:
    env, out = setup(tmp_path)
    graph = load_graph(tmp_path / "g.yaml")
    end = start_run(graph, tmp_path / "g.yaml", {"key": KEY}, env, LegOptions(4), run_id="r")
    assert end.state["paused_at"] == "ok"
    assert (out / "loud-saw").read_text().strip() == KEY  # the node had the value itself
    run = env.runs_dir / "r"
    kept = everything(run)
    for secret in (TOKEN, URL, KEY):
        assert secret not in kept
    assert (
        run / "artifacts" / "loud.out"
    ).read_text() == f"{MASK} {MASK} {MASK} visible-input-value\n"
    assert (run / "failed" / "broken.out").read_text().startswith(f"{MASK} refused\n")
    assert f"{MASK} refused" in end.state["nodes"]["broken"]["detail"]
    assert (run / "feedback" / "review.out").read_text().startswith(f"findings: {MASK}")
    started = json.loads((run / "events.jsonl").read_text().splitlines()[0])
    assert started["inputs"] == {"key": MASK, "plain": "visible-input-value"}
    # (the leg tests' own check then proves state.json is the fold of these masked events)


def test_a_later_leg_is_refused_without_its_secret_input_and_runs_with_it(tmp_path: Path) -> None:
    env, out = setup(tmp_path)
    graph = load_graph(tmp_path / "g.yaml")
    start_run(graph, tmp_path / "g.yaml", {"key": KEY}, env, LegOptions(4), run_id="r")
    approve = Decision("ok", True, "me", "")
    before = (env.runs_dir / "r" / "events.jsonl").read_bytes()
    with pytest.raises(InputError, match=r"input\(s\) key .* -i key=VALUE"):
        resume_run("r", env, LegOptions(4), decision=approve)
    assert (env.runs_dir / "r" / "events.jsonl").read_bytes() == before  # nothing ran
    env.inputs = {"key": KEY}
    end = resume_run("r", env, LegOptions(4), decision=approve)
    assert end.state["nodes"]["later"]["verdict"] == "PASS"
    assert (out / "later-saw").read_text().strip() == KEY
    assert KEY not in everything(env.runs_dir / "r")


def test_a_leg_that_runs_nothing_needs_no_secret_input(tmp_path: Path) -> None:
    env, _ = setup(tmp_path)
    graph = load_graph(tmp_path / "g.yaml")
    start_run(graph, tmp_path / "g.yaml", {"key": KEY}, env, LegOptions(4), run_id="r")
    approve = Decision("ok", True, "me", "")
    end = resume_run("r", env, LegOptions(4, only=frozenset()), decision=approve)
    assert end.state["gates"]["ok"]["by"] == "me"  # a fold's leg: the decision recorded…
    assert end.state["nodes"].get("later", {}).get("verdict", "") == ""  # …and nothing run


def test_a_run_directory_without_a_masker_writes_as_it_is(tmp_path: Path) -> None:
    rd = RunDir(tmp_path / "r")
    rd.write_payload(rd.artifact("a"), TOKEN)
    assert rd.artifact("a").read_text() == TOKEN  # reading tools and tests need no masker
    rd.mask = Masker.of([TOKEN])
    written = rd.append_event({"schema": 1, "seq": 1, "event": "x", "detail": TOKEN})
    rd.close()
    assert written["detail"] == MASK and TOKEN not in (rd.events_path).read_text()
    assert rd.write_session("s", TOKEN.encode()).read_bytes() == MASK.encode()
