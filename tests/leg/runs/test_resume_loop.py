"""Mid-loop resume: a leg killed inside feedback round k resumes into round k, not out of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Cli
from .helpers import (
    comparable,
    events,
    kill_group,
    launches,
    of_kind,
    popen_omg,
    run_path,
    state,
    wait_for,
)


def graph(block: str, passes_on: int | None, max_rounds: int = 3) -> str:
    """impl → lint → review with an arc back to impl; ``block`` hangs on its 2nd execution
    (round 1) until the file `go` exists; review passes on its ``passes_on``-th execution."""

    def cmd(nid: str, extra: str = "") -> str:
        # The hung execution is orphaned by the kill; released by `go`, it exits doing nothing.
        hang = (
            (
                f'if [ "$(grep -c {nid} log.txt)" = 2 ] && [ ! -f go ]; then '
                "touch hanging; while [ ! -f go ]; do sleep 0.01; done; exit 9; fi; "
            )
            if nid == block
            else ""
        )
        return f"'echo {nid} >> log.txt; {hang}{extra}true'"

    verdict = "echo v >> verdicts.txt; " + (
        "false" if passes_on is None else f'[ "$(grep -c v verdicts.txt)" -ge {passes_on} ]'
    )
    return f"""\
name: midloop
nodes:
  - id: impl
    run: {cmd("impl")}
  - id: lint
    depends_on: [impl]
    run: {cmd("lint")}
  - id: review
    depends_on: [lint]
    run: {cmd("review", verdict + " && ")}
    feedback: {{rerun: impl, max: {max_rounds}, stop_on_no_progress: false}}
  - id: ship
    depends_on: [review]
    run: echo ship >> log.txt
"""


def kill_in_round_1(tmp_path: Path, text: str, block: str) -> Path:
    (tmp_path / "g.yaml").write_text(text)
    rd = run_path(tmp_path, "r")
    proc = popen_omg(tmp_path, "run", "g.yaml", "--run-id", "r", "--no-commit")
    wait_for(lambda: (block, 1) in launches(events(rd)) or proc.poll() is not None)
    wait_for(lambda: (tmp_path / "hanging").exists())
    kill_group(proc)
    (tmp_path / "go").touch()
    st = state(rd)
    assert st["nodes"]["review"]["verdict"] == "" and st["nodes"]["review"]["round"] == 1
    assert st["legs"][-1]["outcome"] is None
    return rd


@pytest.mark.parametrize("block", ["impl", "lint", "review"])
def test_killed_in_round_1_resumes_round_1_and_ends_as_an_uninterrupted_run(
    cli: Cli, tmp_path: Path, block: str
) -> None:
    text = graph(block, passes_on=3)
    clean = tmp_path / "clean"
    clean.mkdir()
    (clean / "g.yaml").write_text(text)
    (clean / "go").touch()
    assert cli("run", "g.yaml", "--run-id", "r", cwd=clean).returncode == 0
    baseline = state(run_path(clean, "r"))

    rd = kill_in_round_1(tmp_path, text, block)
    res = cli("resume", "r")
    assert res.returncode == 0, res.stderr
    evs = events(rd)
    body = ["impl", "lint", "review"]
    # The new leg starts where round 1 stood: the node in flight, then the rest of round 1.
    expected = [(n, 1) for n in body[body.index(block) :]] + [(n, 2) for n in body] + [("ship", 0)]
    assert launches(evs, leg=2) == expected
    # Body records of round 1 that had passed were kept, not re-run.
    assert not {n for n, r in launches(evs, leg=2) if r == 1} & set(body[: body.index(block)])
    assert [e["round"] for e in of_kind(evs, "node_retried") if e["reason"] == "feedback"] == [1, 2]
    assert comparable(state(rd)) == comparable(baseline)


def test_rounds_already_spent_are_not_given_back(cli: Cli, tmp_path: Path) -> None:
    rd = kill_in_round_1(tmp_path, graph("impl", passes_on=None, max_rounds=2), "impl")
    res = cli("resume", "r")
    assert res.returncode == 1, res.stderr
    evs = events(rd)
    # max 2, killed in round 1: round 1 finishes, one more round (2), then the loop is spent.
    assert launches(evs, leg=2) == [
        ("impl", 1),
        ("lint", 1),
        ("review", 1),
        ("impl", 2),
        ("lint", 2),
        ("review", 2),
    ]
    fired = [e["round"] for e in of_kind(evs, "node_retried") if e["reason"] == "feedback"]
    assert fired == [1, 2]
    rec = state(rd)["nodes"]["review"]
    assert rec["verdict"] == "FAIL"
    assert rec["detail"].startswith("feedback exhausted after 2 round(s) of impl → review")
