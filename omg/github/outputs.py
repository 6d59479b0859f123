"""Step outputs and the step summary: GITHUB_OUTPUT's multi-line syntax, GitHub's size caps."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path

from omg.mask import NOTHING, Masker

#: The step outputs of every `omg leg` (action.yml exposes each).
OUTPUT_NAMES = ("status", "run-id", "gate", "next", "cost-usd", "state-ref")
#: What the fan-out modes add: the plan's wave (matrix, count, base) and a job's record.
FANOUT_OUTPUT_NAMES = ("matrix", "count", "base", "record")
#: GitHub refuses a step summary over 1024 KiB ("supports content up to a size of 1024k").
SUMMARY_LIMIT = 1024 * 1024
#: What omg writes at most, leaving room for what other steps of the job append.
SUMMARY_CAP = 900 * 1024


def write_outputs(path: Path | None, values: Mapping[str, str], *, mask: Masker = NOTHING) -> None:
    """Append ``name<<DELIM … DELIM`` blocks (masked): safe for any value, newlines included."""
    if path is None:
        return
    lines = []
    for name, value in values.items():
        value = mask.text(value)
        delim = f"omg_{secrets.token_hex(8)}"
        while delim in value:  # pragma: no cover - 64 random bits
            delim = f"omg_{secrets.token_hex(8)}"
        lines.append(f"{name}<<{delim}\n{value}\n{delim}\n")
    with path.open("a", encoding="utf-8") as fh:
        fh.write("".join(lines))


def clip_markdown(text: str, cap: int = SUMMARY_CAP, *, tail: str = "") -> str:
    """``text`` cut to ``cap`` UTF-8 bytes on a line boundary, ``tail`` saying what was cut."""
    data = text.encode("utf-8")
    if len(data) <= cap:
        return text
    room = cap - len(tail.encode("utf-8")) - 200
    cut = data[: max(0, room)].decode("utf-8", "ignore")
    cut = cut[: cut.rfind("\n") + 1] if "\n" in cut else cut
    dropped = len(data) - len(cut.encode("utf-8"))
    return f"{cut}\n_… {dropped:,} bytes cut to stay under GitHub's size limit._\n{tail}"


def write_summary(path: Path | None, markdown: str, *, mask: Masker = NOTHING) -> None:
    """Append to the step summary (masked), never past omg's share of GitHub's limit."""
    if path is None:
        return
    with path.open("a", encoding="utf-8") as fh:
        fh.write(clip_markdown(mask.text(markdown)))
