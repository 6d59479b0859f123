"""Kept transcripts: secrets never enter the run directory, an oversized one is not kept, and a
restore never overwrites a transcript claude already has."""

from __future__ import annotations

from pathlib import Path

from omg.leg import transcripts
from omg.runners.claude import ClaudeRunner
from omg.runners.claude.transcript import transcript_path
from omg.state.store import RunDir

SESSION = "0b6c1f7e-1111-4222-8333-444455556666"
CLAUDE = ClaudeRunner()


def made(tmp_path: Path, body: bytes) -> tuple[RunDir, dict[str, str], Path]:
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path / "home")}
    lane = tmp_path / "lane"
    lane.mkdir()
    source = transcript_path(env, lane, SESSION)
    assert source is not None
    source.parent.mkdir(parents=True)
    source.write_bytes(body)
    return RunDir(tmp_path / "run"), env, lane


def test_kept_transcript_has_every_secret_valued_variable_masked(tmp_path: Path) -> None:
    body = b'{"t":"sk-ant-abcdef123456 and ghs_0123456789abcdef and plain-words-kept"}\n'
    rundir, env, lane = made(tmp_path, body)
    env |= {"ANTHROPIC_API_KEY": "sk-ant-abcdef123456", "MY_DEPLOY_TOKEN": "ghs_0123456789abcdef"}
    env["GREETING"] = "plain-words-kept"
    kept = transcripts.keep(rundir, CLAUDE, env, lane, SESSION)
    assert kept is not None
    text = kept.read_bytes()
    assert b"sk-ant" not in text and b"ghs_" not in text
    assert text.count(b"***") == 2
    assert b"plain-words-kept" in text


def test_oversized_transcript_is_not_kept(tmp_path: Path) -> None:
    rundir, env, lane = made(tmp_path, b"x" * (transcripts.LIMIT + 1))
    assert transcripts.keep(rundir, CLAUDE, env, lane, SESSION) is None
    assert not rundir.session(SESSION).exists()


def test_restore_puts_the_kept_transcript_back_on_a_fresh_config(tmp_path: Path) -> None:
    rundir, env, lane = made(tmp_path, b'{"turn":1}\n')
    assert transcripts.keep(rundir, CLAUDE, env, lane, SESSION) is not None
    fresh = {"CLAUDE_CONFIG_DIR": str(tmp_path / "fresh-config")}
    assert transcripts.restore(rundir, CLAUDE, fresh, lane, SESSION)
    target = transcript_path(fresh, lane, SESSION)
    assert target is not None and target.read_bytes() == b'{"turn":1}\n'


def test_restore_never_overwrites_a_transcript_claude_already_has(tmp_path: Path) -> None:
    rundir, env, lane = made(tmp_path, b'{"turn":1}\n')
    assert transcripts.keep(rundir, CLAUDE, env, lane, SESSION) is not None
    source = transcript_path(env, lane, SESSION)
    assert source is not None
    source.write_bytes(b'{"turn":2}\n')
    assert not transcripts.restore(rundir, CLAUDE, env, lane, SESSION)
    assert source.read_bytes() == b'{"turn":2}\n'
