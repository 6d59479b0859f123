"""The process chokepoint keeps a bounded capture of what a child prints, saying what it cut."""

from __future__ import annotations

from pathlib import Path

from omg.runners.process import CAPTURE_LIMIT, spawn


def test_a_child_that_prints_more_than_the_limit_keeps_its_head_and_tail(tmp_path: Path) -> None:
    script = f"echo FIRST; head -c {3 * CAPTURE_LIMIT} /dev/zero | tr '\\0' x; echo; echo LAST"
    res = spawn(["sh", "-c", script], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"}, timeout_s=60)
    assert res.exit_code == 0
    assert len(res.stdout) <= CAPTURE_LIMIT + (1 << 16) + 200  # within one read of the cap
    assert res.stdout.startswith("FIRST\n") and res.stdout.endswith("LAST\n")
    assert "[… omg cut " in res.stdout


def test_a_child_under_the_limit_is_kept_whole(tmp_path: Path) -> None:
    res = spawn(["sh", "-c", "printf 'a%.0s' $(seq 1000)"], cwd=tmp_path, env={}, timeout_s=10)
    assert res.stdout == "a" * 1000
