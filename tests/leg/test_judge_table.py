"""Judging one attempt (omg.leg.judge), case by case: exit_zero → result_matches → verify."""

from __future__ import annotations

from pathlib import Path

import pytest

from omg.graph.model import Node, SuccessCheck, Verify
from omg.graph.placeholders import ShellText
from omg.leg.judge import judge
from omg.runners.base import Output
from omg.runners.process import spawn
from omg.runners.shell import ShellRunner


def node(check: SuccessCheck, kind: str = "agent") -> Node:
    return Node(id="n", kind=kind, prompt="p", success_check=check)  # type: ignore[arg-type]


EXIT0 = SuccessCheck(exit_zero=True)
MATCH = SuccessCheck(result_matches=r"^OK\b")
VERIFY = SuccessCheck(verify=Verify(command="v"))
VERIFY_OUT = SuccessCheck(verify=Verify(command="v", output_matches="all green"))
VERIFY_EXIT3 = SuccessCheck(verify=Verify(command="v", expect_exit=3))

# (case, check, output, verify script, passed, cause, judged, provenance)
CASES = [
    (
        "no check, exit 0 passes",
        SuccessCheck(),
        Output(0, "hi"),
        None,
        True,
        None,
        False,
        "exit-only",
    ),
    (
        "no check, exit 1 fails",
        SuccessCheck(),
        Output(1, "boom"),
        None,
        False,
        "nonzero_exit",
        True,
        None,
    ),
    ("exit_zero, exit 0 passes", EXIT0, Output(0, ""), None, True, None, False, "exit-only"),
    ("exit_zero, exit 2 fails", EXIT0, Output(2, ""), None, False, "nonzero_exit", True, None),
    (
        "a runner error is the cause, unjudged",
        EXIT0,
        Output(None, "", error="timeout", detail="timed out"),
        None,
        False,
        "timeout",
        False,
        None,
    ),
    (
        "result_matches, matched",
        MATCH,
        Output(0, "OK done"),
        None,
        True,
        None,
        False,
        "self-reported",
    ),
    (
        "result_matches, not matched",
        MATCH,
        Output(0, "nope"),
        None,
        False,
        "result_mismatch",
        True,
        None,
    ),
    (
        "result_matches alone judges the text, not the exit",
        MATCH,
        Output(1, "OK"),
        None,
        True,
        None,
        False,
        "self-reported",
    ),
    (
        "exit_zero and result_matches need both",
        SuccessCheck(exit_zero=True, result_matches="OK"),
        Output(1, "OK"),
        None,
        False,
        "nonzero_exit",
        True,
        None,
    ),
    ("verify exit 0 passes", VERIFY, Output(0, "r"), "exit 0", True, None, False, "verified"),
    ("verify exit 1 fails", VERIFY, Output(0, "r"), "exit 1", False, "verify_failed", True, None),
    (
        "verify expects its exit",
        VERIFY_EXIT3,
        Output(0, "r"),
        "exit 3",
        True,
        None,
        False,
        "verified",
    ),
    (
        "verify output matched",
        VERIFY_OUT,
        Output(0, "r"),
        "echo all green",
        True,
        None,
        False,
        "verified",
    ),
    (
        "verify output not matched",
        VERIFY_OUT,
        Output(0, "r"),
        "echo red",
        False,
        "verify_failed",
        True,
        None,
    ),
    (
        "verify that cannot start is a run_error",
        VERIFY,
        Output(0, "r"),
        "no-such-command-omg-test",
        False,
        "run_error",
        False,
        None,
    ),
    (
        "denied tools with only an exit code",
        SuccessCheck(),
        Output(0, "done", denials=("Bash",)),
        None,
        False,
        "run_error",
        False,
        None,
    ),
    (
        "denied tools with a result check",
        MATCH,
        Output(0, "OK", denials=("Bash",)),
        None,
        True,
        None,
        False,
        "self-reported",
    ),
]


@pytest.mark.parametrize(
    ("check", "out", "script", "passed", "cause", "judged", "provenance"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_judge(
    tmp_path: Path,
    check: SuccessCheck,
    out: Output,
    script: str | None,
    passed: bool,
    cause: str | None,
    judged: bool,
    provenance: str | None,
) -> None:
    j = judge(
        node(check),
        out,
        verify_command=None if script is None else ShellText(script),
        verify_cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        spawn=spawn,
        shell=ShellRunner(),
    )
    assert (j.passed, j.cause, j.judged, j.provenance) == (passed, cause, judged, provenance), j
    if not passed:
        assert j.detail, "a failure says why"


def test_a_failing_verify_hands_back_the_reply_and_the_evidence(tmp_path: Path) -> None:
    j = judge(
        node(VERIFY),
        Output(0, "my findings"),
        verify_command=ShellText("echo E; exit 1"),
        verify_cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        spawn=spawn,
        shell=ShellRunner(),
    )
    assert j.payload.startswith("my findings") and "E" in j.payload.split("my findings", 1)[1]


def test_a_mismatch_hands_back_the_reply(tmp_path: Path) -> None:
    j = judge(
        node(MATCH),
        Output(0, "nope"),
        verify_command=None,
        verify_cwd=tmp_path,
        env={},
        spawn=spawn,
        shell=ShellRunner(),
    )
    assert j.payload == "nope" and "/^OK\\b/" in j.detail


def test_a_pattern_that_never_ends_is_unjudged_not_a_hang(tmp_path: Path) -> None:
    evil = SuccessCheck(result_matches=r"^(a+)+$")
    j = judge(
        node(evil),
        Output(0, "a" * 64 + "!"),
        verify_command=None,
        verify_cwd=tmp_path,
        env={},
        spawn=spawn,
        shell=ShellRunner(),
        match_timeout_s=0.5,
    )
    assert (j.passed, j.cause, j.judged) == (False, "match_timeout", False)


def test_verify_values_reach_the_shell_as_variables_never_code(tmp_path: Path) -> None:
    from omg.graph.placeholders import Value

    hostile = "$(touch pwned)"
    cmd = ShellText('test "$OMG_P1" = "$EXPECT"', (Value("OMG_P1", "x", hostile),))
    j = judge(
        node(VERIFY),
        Output(0, ""),
        verify_command=cmd,
        verify_cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "EXPECT": hostile},
        spawn=spawn,
        shell=ShellRunner(),
    )
    assert j.passed and not (tmp_path / "pwned").exists()
