"""Reading claude's transcript: the assistant's tool calls, its text and refused tools, in
order; everything else (other records, broken lines) passed over."""

from __future__ import annotations

import json
from pathlib import Path

from omg.runners.base import Step
from omg.runners.claude.transcript import steps, transcript_path


def write(path: Path, *records: object) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n")
    return path


def said(role: str, *content: dict[str, object], at: str = "2026-12-03T12:59:37.807Z") -> dict:
    return {"type": role, "timestamp": at, "message": {"role": role, "content": list(content)}}


def test_steps_are_the_assistants_tools_text_and_refusals_in_order(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.jsonl",
        {"type": "queue-operation", "operation": "enqueue"},
        said("user", {"type": "text", "text": "the prompt is not a step"}),
        said("assistant", {"type": "tool_use", "name": "Write", "input": {"file_path": "a.py"}}),
        "{not json",
        said("user", {"type": "tool_result", "is_error": True, "content": "denied: rm -rf /"}),
        said("assistant", {"type": "tool_use", "name": "Bash", "input": {"command": "make  test"}}),
        said("assistant", {"type": "text", "text": "DONE\nall   green"}),
    )
    assert steps(path) == [
        Step("2026-12-03T12:59:37.807Z", "tool", "Write a.py"),
        Step("2026-12-03T12:59:37.807Z", "error", "denied: rm -rf /"),
        Step("2026-12-03T12:59:37.807Z", "tool", "Bash make test"),
        Step("2026-12-03T12:59:37.807Z", "text", "DONE all green"),
    ]


def test_only_the_last_steps_are_kept_and_a_missing_file_has_none(tmp_path: Path) -> None:
    many = [said("assistant", {"type": "text", "text": f"step {i}"}) for i in range(30)]
    path = write(tmp_path / "s.jsonl", *many)
    assert [s.text for s in steps(path, limit=3)] == ["step 27", "step 28", "step 29"]
    assert steps(tmp_path / "absent.jsonl") == []


def test_the_transcript_lives_under_the_config_dir_by_the_cwd_with_non_alphanumerics_dashed(
    tmp_path: Path,
) -> None:
    lane = tmp_path / "wt_1.lane"
    lane.mkdir()
    at = transcript_path({"CLAUDE_CONFIG_DIR": "/cfg", "HOME": "/h"}, lane, "S")
    dashed = "".join(c if c.isalnum() else "-" for c in str(lane.resolve()))
    assert at == Path("/cfg") / "projects" / dashed / "S.jsonl"
    assert transcript_path({"HOME": "/h"}, lane, "S") == Path(
        "/h/.claude/projects", dashed, "S.jsonl"
    )
    assert (
        transcript_path({}, lane, "S") is None
        and transcript_path({"HOME": "/h"}, lane, None) is None
    )
