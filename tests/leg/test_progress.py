"""Progress output: plain lines in CI, a redrawn status line on a terminal."""

from __future__ import annotations

import io
import time

from omg.cli.progress import Progress


def _events() -> list[dict]:
    return [
        {"event": "node_started", "node_id": "build"},
        {"event": "node_passed", "node_id": "build", "provenance": "verified", "cost_usd": 0.5},
        {"event": "node_started", "node_id": "review", "round": 1},
        {"event": "node_failed", "node_id": "review", "round": 1, "detail": "it broke"},
    ]


def test_plain_lines_in_ci_carry_verdict_round_cost_and_detail() -> None:
    out = io.StringIO()
    with Progress(out, live=False) as progress:
        for ev in _events():
            progress(ev, {})
    lines = out.getvalue().splitlines()
    assert lines[0] == "▶ build  running…"
    assert lines[1].startswith("✓ build  PASS (verified)  $0.5000")
    assert lines[2] == "▶ review  running…  round 1"
    assert lines[3].startswith("✗ review  FAIL  round 1") and lines[3].endswith("it broke")
    assert "\r" not in out.getvalue() and "\033" not in out.getvalue()


def test_a_terminal_gets_a_live_status_line_for_running_nodes() -> None:
    out = io.StringIO()
    with Progress(out, live=True) as progress:
        progress({"event": "node_started", "node_id": "slow"}, {})
        time.sleep(0.5)  # the ticker redraws every 0.2 s
    text = out.getvalue()
    assert "\r\033[K" in text
    assert any(f"{frame} slow " in text for frame in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    assert text.endswith("\r\033[K"), "the status line is cleared when the leg ends"


def test_a_detail_cannot_start_a_log_line_the_runner_reads_as_a_workflow_command() -> None:
    out = io.StringIO()
    forged = "boom\n::error title=forged::fake\r::add-mask::x\r\n  ::stop-commands::t"
    with Progress(out, live=False) as progress:
        progress({"event": "node_started", "node_id": "n"}, {})
        progress({"event": "node_failed", "node_id": "n", "detail": forged}, {})
        progress(
            {"event": "gate_rejected", "node_id": "g", "by": "x", "reason": "a\n::error::b"}, {}
        )
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert not [ln for ln in lines if ln.lstrip().startswith("::")]
    assert lines[1].endswith(
        "boom ↵ ::error title=forged::fake ↵ ::add-mask::x ↵   ::stop-commands::t"
    )
