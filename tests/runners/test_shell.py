"""ShellRunner through the real omg.proc.spawn."""

from __future__ import annotations

from pathlib import Path

from omg.runners.shell import ShellRunner


def shell_inv(make_inv, command: str, **kw):
    return make_inv(command, kind="shell", node={"run": command}, **kw)


def test_argv_is_sh_c(make_inv):
    assert ShellRunner().argv(shell_inv(make_inv, "echo hi")) == ["sh", "-c", "echo hi"]


def test_output_captures_stdout_and_stderr(make_inv, rec_spawn):
    out = ShellRunner().run(shell_inv(make_inv, "echo out; echo err >&2; echo out2"), rec_spawn)
    assert out.error is None
    assert out.exit_code == 0
    assert out.result.splitlines() == ["out", "err", "out2"]
    assert rec_spawn.calls[0]["merge_stderr"] is True


def test_exit_code_is_reported_not_judged(make_inv, rec_spawn):
    out = ShellRunner().run(shell_inv(make_inv, "echo failing; exit 3"), rec_spawn)
    assert out.error is None
    assert out.exit_code == 3
    assert out.result == "failing\n"


def test_missing_command_127_is_run_error(make_inv, rec_spawn):
    out = ShellRunner().run(shell_inv(make_inv, "omg_no_such_command_xyz --flag"), rec_spawn)
    assert out.exit_code == 127
    assert out.error == "run_error"
    assert "environment failure" in out.detail


def test_command_not_found_text_is_run_error(make_inv, rec_spawn):
    cmd = "echo 'make: gcc: command not found' >&2; exit 2"
    out = ShellRunner().run(shell_inv(make_inv, cmd), rec_spawn)
    assert out.exit_code == 2
    assert out.error == "run_error"


def test_timeout_kills_the_whole_process_group(make_inv, rec_spawn, tmp_path, process_gone):
    pidfile = tmp_path / "grandchild.pid"
    cmd = f"sleep 300 & echo $! > {pidfile}; wait"
    out = ShellRunner().run(shell_inv(make_inv, cmd, timeout_s=1.0), rec_spawn)
    assert out.error == "timeout"
    assert out.exit_code is None
    assert "timed out after 1s" in out.detail
    gpid = int(pidfile.read_text())
    assert process_gone(gpid), f"grandchild {gpid} survived the timeout"


def test_cwd_is_honoured(make_inv, rec_spawn, tmp_path):
    where = tmp_path / "some" / "dir"
    where.mkdir(parents=True)
    out = ShellRunner().run(shell_inv(make_inv, "pwd -P", cwd=where), rec_spawn)
    assert Path(out.result.strip()) == where.resolve()


def test_env_is_exactly_the_given_one(make_inv, rec_spawn, base_env):
    env = {**base_env, "ONLY_THIS": "yes"}
    out = ShellRunner().run(
        shell_inv(make_inv, "echo ${ONLY_THIS}-${GITHUB_TOKEN:-none}", env=env), rec_spawn
    )
    assert out.result.strip() == "yes-none"
