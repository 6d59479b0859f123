"""success_check: exit_zero → result_matches → verify, first failure wins; provenance."""

from __future__ import annotations

from pathlib import Path

import pytest
from kit import omg_run, write_graph

VERIFY = "touch verify-ran; test -f good"


@pytest.mark.parametrize(
    ("run", "cause", "verify_ran"),
    [
        ("echo nope; exit 1", "nonzero_exit", False),
        ("echo nope", "result_mismatch", False),
        ("echo OK fine", "verify_failed", True),
    ],
)
def test_checks_run_in_order_and_stop_at_the_first_failure(
    tmp_path: Path, omg, run_dir_check, run: str, cause: str, verify_ran: bool
) -> None:
    g = write_graph(
        tmp_path,
        f"""
name: order
nodes:
  - id: n
    run: '{run}'
    success_check:
      exit_zero: true
      result_matches: '^OK\\b'
      verify: {{command: '{VERIFY}'}}
""",
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    state = run_dir_check(r.dir)
    rec = state["nodes"]["n"]
    assert (rec["verdict"], rec["cause"], rec["judged"]) == ("FAIL", cause, True)
    assert (tmp_path / "verify-ran").exists() == verify_ran


def test_provenance_names_what_a_pass_rests_on(tmp_path: Path, omg, run_dir_check) -> None:
    (tmp_path / "good").touch()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "here").touch()
    g = write_graph(
        tmp_path,
        """
        name: provenance
        nodes:
          - id: exit-only
            run: echo hi
          - id: self-reported
            run: echo "**OK** all good"
            success_check: {exit_zero: true, result_matches: '^[*_`\\s]*OK\\b'}
          - id: verified
            run: echo OK
            success_check:
              result_matches: '^OK'
              verify: {command: 'test -f here && echo "3 passed"', cwd: sub,
                       output_matches: '\\d+ passed'}
          - id: expected-exit
            run: echo hi
            success_check:
              verify: {command: 'exit 3', expect_exit: 3}
          - id: reply-only
            run: 'echo "OK but exit 1"; exit 1'
            success_check: {result_matches: '^OK'}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 0, r.explain()
    nodes = run_dir_check(r.dir)["nodes"]
    assert {n: rec["provenance"] for n, rec in nodes.items()} == {
        "exit-only": "exit-only",
        "self-reported": "self-reported",
        "verified": "verified",
        "expected-exit": "verified",
        "reply-only": "self-reported",
    }


def test_a_verify_output_mismatch_fails_with_its_evidence(
    tmp_path: Path, omg, run_dir_check
) -> None:
    g = write_graph(
        tmp_path,
        """
        name: evidence
        nodes:
          - id: n
            run: echo done
            success_check:
              verify: {command: 'echo "2 failed, 1 passed"', output_matches: '^\\d+ passed$'}
    """,
    )
    r = omg_run(omg, g)
    assert r.code == 1, r.explain()
    rec = run_dir_check(r.dir)["nodes"]["n"]
    assert rec["cause"] == "verify_failed"
    assert "output did not match" in rec["detail"]
    assert "2 failed, 1 passed" in rec["detail"]
