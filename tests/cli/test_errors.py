"""The CLI's one error handler: OmgError → its message and exit code; a bug → traceback, exit 3."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from kit import omg_in_process

from tests.conftest import child_env

# A child process that adds one command which fails the way a bug would, then runs the CLI.
BUGGY = textwrap.dedent("""
    import sys
    from omg.cli import app as cli

    @cli.app.command("boom")
    def boom() -> None:
        raise RuntimeError("kaboom")

    sys.argv = ["omg", "boom"]
    cli.main()
""")


def test_a_bug_prints_unexpected_error_and_the_traceback_and_exits_70() -> None:
    """A bug never shares the refusal code (3): it exits 70, EX_SOFTWARE."""
    res = subprocess.run([sys.executable, "-c", BUGGY], capture_output=True, text=True)
    assert res.returncode == 70
    assert res.stderr.startswith("omg: unexpected error")
    assert "Traceback" in res.stderr and "RuntimeError: kaboom" in res.stderr


def test_an_omg_error_is_one_clear_line_with_its_exit_code(omg, tmp_path) -> None:
    res = omg("resume", "no-such-run", "--runs-dir", str(tmp_path))
    assert res.returncode == 3
    assert res.stderr.strip().splitlines()[-1].startswith("omg: no run 'no-such-run'")
    assert "Traceback" not in res.stderr


def test_usage_errors_exit_2(tmp_path) -> None:
    res = omg_in_process(
        "resume", "r", "--approve", "g", "--reject", "g", "--reason", "x", cwd=tmp_path
    )
    assert res.returncode == 2 and "mutually exclusive" in res.stderr
    res = omg_in_process("run", cwd=tmp_path)  # missing argument: typer's own usage error
    assert res.returncode == 2


def test_a_reject_whose_reason_shows_nothing_is_a_usage_error(omg, tmp_path) -> None:
    for said in ("", " ", "\u200b", "\u2060\ufeff\u202e", "\u3164\u0301"):
        res = omg_in_process("resume", "r", "--reject", "g", "--reason", said, cwd=tmp_path)
        assert res.returncode == 2, (said, res.stderr)
        assert "--reject needs --reason TEXT" in res.stderr and "words that show" in res.stderr
    res = omg("resume", "r", "--reject", "g", "--reason", "no\udcff")  # a stray byte of argv
    assert res.returncode == 2 and "--reason is not valid UTF-8 (byte 0xFF" in res.stderr


def test_a_malformed_line_of_omg_inputs_is_named_by_number_never_shown(omg, tmp_path) -> None:
    """OMG_INPUTS is how a secret input is given; a line missing its = may be all secret."""
    (tmp_path / "g.yaml").write_text("name: g\nnodes: [{id: a, run: 'true'}]\n")
    env = {**child_env(), "OMG_INPUTS": "who=x\ndeploy_key: s3cr3t-deploy-key-value\n"}
    res = omg("run", "g.yaml", "--no-commit", env=env)
    assert res.returncode == 2, res.stderr
    assert "OMG_INPUTS line 2 must look like name=value" in res.stderr
    assert "s3cr3t" not in res.stderr + res.stdout
