"""What lint passes never crashes a leg: a pattern that backtracks forever, a value no
environment can carry, and a graph or inputs as large as a run may record — each ends as a
clear failure or refusal, and every event line omg writes is one it can read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit import omg_run, render_command, write_graph

from omg.errors import InputError, StateError
from omg.graph.limits import MAX_INPUT_BYTES, MAX_SNAPSHOT_BYTES
from omg.graph.load import check_data, resolve_inputs
from omg.graph.model import Backoff, Node, SuccessCheck, Verify
from omg.leg.judge import Judgment, judge
from omg.runners.base import Output
from omg.runners.process import spawn
from omg.runners.shell import ShellRunner
from omg.state.store import MAX_LINE, RunDir

CATASTROPHIC = "^(a+)+$"
SLOW_REPLY = "a" * 40 + "b"  # 2^40 backtracking steps: never finishes


def _judged(tmp_path: Path, sc: SuccessCheck, reply: str) -> Judgment:
    node = Node(id="n", kind="shell", run="true", success_check=sc)
    verify = render_command(sc.verify.command, lambda tok: "") if sc.verify is not None else None
    return judge(
        node,
        Output(0, reply),
        verify_command=verify,
        verify_cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        spawn=spawn,
        shell=ShellRunner(),
        match_timeout_s=1.0,
    )


def test_a_result_pattern_that_backtracks_forever_is_stopped_as_its_own_failure(
    tmp_path: Path,
) -> None:
    j = _judged(tmp_path, SuccessCheck(exit_zero=True, result_matches=CATASTROPHIC), SLOW_REPLY)
    assert not j.passed and j.cause == "match_timeout" and not j.judged
    assert 'node "n" could not judge success_check result_matches' in j.detail
    assert "did not finish within 1s" in j.detail and "backtracks catastrophically" in j.detail


def test_a_verify_output_pattern_that_backtracks_forever_is_stopped_too(tmp_path: Path) -> None:
    sc = SuccessCheck(verify=Verify(command=f"printf %s {SLOW_REPLY}", output_matches=CATASTROPHIC))
    j = _judged(tmp_path, sc, "")
    assert not j.passed and j.cause == "match_timeout"
    assert "could not judge success_check verify.output_matches" in j.detail


def test_patterns_still_judge_as_python_re_does(tmp_path: Path) -> None:
    ok = _judged(tmp_path, SuccessCheck(result_matches=r"^[*_`\s]*DONE\b"), "**DONE** é")
    no = _judged(tmp_path, SuccessCheck(result_matches=r"(?m)^SHIP IT$"), "ship it")
    assert ok.passed and ok.provenance == "self-reported"
    assert not no.passed and no.cause == "result_mismatch" and no.judged


def test_a_value_with_a_nul_fails_its_node_clearly(tmp_path: Path, omg, run_dir_check) -> None:
    g = write_graph(
        tmp_path,
        """
        name: nul
        on_fail: continue
        nodes:
          - id: a
            run: printf 'a\\000b'
          - id: b
            depends_on: [a]
            run: echo "{{ artifacts.a | inline }}"
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    assert "unexpected error" not in r.err
    rec = run_dir_check(r.dir)["nodes"]["b"]
    assert rec["verdict"] == "FAIL" and rec["cause"] == "run_error"
    assert "holds a NUL byte, which no environment variable can carry" in rec["detail"]


def test_a_huge_backoff_factor_never_overflows() -> None:
    assert Backoff(initial="1s", factor=1e308, max="1m").delay_s(5) == 60.0


def test_the_limits_fit_one_event_line() -> None:
    """A graph and inputs at their limits, with the rest of run_started, fit a line."""
    assert MAX_SNAPSHOT_BYTES + MAX_INPUT_BYTES + 64 * 1024 < MAX_LINE


def test_a_graph_too_large_to_record_is_refused_at_its_longest_value() -> None:
    data = {"name": "big", "nodes": [{"id": "a", "run": "true", "description": "x" * 600_000}]}
    graph, found = check_data(data, "big.yaml")
    (err,) = [f for f in found if f.severity == "error"]
    assert graph is None and err.code == "graph-too-large"
    assert "the longest value is $.nodes[0].description (600,002 bytes)" in err.message


def test_inputs_too_large_or_not_text_are_refused() -> None:
    graph, _ = check_data(
        {"name": "i", "inputs": ["x", "y"], "nodes": [{"id": "a", "run": "true"}]}, "i"
    )
    assert graph is not None
    half = "x" * (MAX_INPUT_BYTES // 2)
    with pytest.raises(InputError, match="more than the 262,144 a run records"):
        resolve_inputs(graph, {"x": half, "y": half})
    with pytest.raises(InputError, match="input 'x' is not UTF-8 text"):
        resolve_inputs(graph, {"x": b"\xff".decode("utf-8", "surrogateescape"), "y": ""})


def test_an_event_line_too_long_to_read_back_is_never_written(tmp_path: Path) -> None:
    rundir = RunDir(tmp_path / "r")
    rundir.append_event({"schema": 1, "seq": 1, "event": "run_started", "x": "small"})
    with pytest.raises(StateError, match=r"more than the 1,048,576 a line of events\.jsonl"):
        rundir.append_event({"schema": 1, "seq": 2, "event": "run_started", "x": "y" * MAX_LINE})
    assert len((tmp_path / "r" / "events.jsonl").read_text().splitlines()) == 1


def test_a_run_at_the_limits_records_and_reads_back(tmp_path: Path, omg, run_dir_check) -> None:
    """The largest graph and inputs a run accepts: its first event is read back by status."""
    big = "d" * (MAX_SNAPSHOT_BYTES - 4096)
    g = write_graph(
        tmp_path,
        f"""
        name: large
        inputs: [x, y]
        nodes:
          - id: a
            description: {big}
            run: printf '%s' {{{{ inputs.x }}}} | wc -c
    """,
    )
    value = "v" * 120_000  # one argv string holds 128 KiB; two of them reach the input limit
    r = omg_run(omg, g, "-i", f"x={value}", "-i", f"y={value}")
    assert r.code == 0, r.explain()
    run_dir_check(r.dir)
    assert r.artifact("a").strip() == "120000"
    first = (r.dir / "events.jsonl").read_bytes().split(b"\n")[0]
    assert MAX_SNAPSHOT_BYTES < len(first) < MAX_LINE
    assert json.loads(first)["inputs"]["y"] == value
    status = omg("status", "r1", "--runs-dir", str(r.dir.parent), cwd=tmp_path)
    assert status.returncode == 0, status.stderr
