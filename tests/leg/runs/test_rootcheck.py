"""A node that can become root reads the model keys out of omg's memory, so omg checks before
a leg's agents run with a key: a passwordless `sudo` (a stand-in program first on PATH, once
succeeding, once asking for a password) or omg running as root refuses the leg in CI — with
the fix named, nothing recorded — or warns where OMG_SUDO says so."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from kit import clean_env, run_graph

from omg.errors import UsageError
from omg.leg import rootcheck
from omg.runners.process import spawn

USER = 1000  # a user's id: only the sudo check decides
GRAPH = "name: g\nnodes:\n  - id: a\n    prompt: do it\n"


def fake_sudo(where: Path, code: int) -> dict[str, str]:
    """An environment whose PATH finds a `sudo` that exits ``code`` (0: no password asked)."""
    bin_dir = where / "bin"
    bin_dir.mkdir(parents=True)
    sudo = bin_dir / "sudo"
    asked = where / "asked"
    sudo.write_text(f'#!/bin/sh\nprintf "%s " "$@" >> "{asked}"\nexit {code}\n')
    sudo.chmod(sudo.stat().st_mode | stat.S_IXUSR)
    return clean_env(PATH=f"{bin_dir}:{os.environ['PATH']}")


def test_a_passwordless_sudo_refuses_in_ci_and_names_the_fix(tmp_path: Path) -> None:
    env = {**fake_sudo(tmp_path, 0), "CI": "true"}
    with pytest.raises(UsageError) as refused:
        rootcheck.check(env, spawn, lambda _: None, euid=USER)
    said = str(refused.value)
    assert "`sudo -n true` succeeds" in said and "/etc/sudoers.d/runner" in said
    assert "OMG_SUDO=warn" in said
    assert (tmp_path / "asked").read_text().split() == ["-n", "true"]  # never a password


def test_a_sudo_that_asks_for_a_password_passes(tmp_path: Path) -> None:
    warned: list[str] = []
    env = {**fake_sudo(tmp_path, 1), "CI": "true"}
    rootcheck.check(env, spawn, warned.append, euid=USER)
    assert warned == [] and (tmp_path / "asked").exists()


def test_no_sudo_at_all_passes(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    rootcheck.check({"PATH": str(tmp_path / "empty"), "CI": "true"}, spawn, print, euid=USER)


@pytest.mark.parametrize(
    ("env", "mode"),
    [
        ({}, "warn"),
        ({"CI": "true"}, "refuse"),
        ({"CI": "false"}, "warn"),
        ({"CI": "true", "OMG_SUDO": "warn"}, "warn"),
        ({"OMG_SUDO": "Refuse"}, "refuse"),
    ],
)
def test_the_mode_follows_omg_sudo_else_ci(env: dict[str, str], mode: str) -> None:
    assert rootcheck.mode(env) == mode


def test_a_mode_omg_does_not_know_is_refused() -> None:
    with pytest.raises(UsageError, match="OMG_SUDO='allow': say refuse or warn"):
        rootcheck.mode({"OMG_SUDO": "allow"})


def test_configured_to_warn_it_warns_and_goes_on(tmp_path: Path) -> None:
    warned: list[str] = []
    env = {**fake_sudo(tmp_path, 0), "CI": "true", "OMG_SUDO": "warn"}
    rootcheck.check(env, spawn, warned.append, euid=USER)
    assert len(warned) == 1 and "read the model keys from omg's memory" in warned[0]


def test_root_itself_is_refused_without_asking_sudo(tmp_path: Path) -> None:
    env = {**fake_sudo(tmp_path, 1), "CI": "true"}
    with pytest.raises(UsageError, match="omg runs as root"):
        rootcheck.check(env, spawn, print, euid=0)
    assert not (tmp_path / "asked").exists()


def test_a_leg_holding_a_key_for_a_remote_api_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    """No base URL: the key opens Anthropic's API. Refused before run_started, no agent run."""
    env = {**fake_sudo(tmp_path / "sys", 0), "CI": "true", "ANTHROPIC_API_KEY": "sk-test"}
    ran = run_graph(tmp_path / "w", GRAPH, parent_env=env)
    assert isinstance(ran.error, UsageError) and "omg refuses" in str(ran.error)
    assert not any(e["event"] == "run_started" for e in ran.events())
