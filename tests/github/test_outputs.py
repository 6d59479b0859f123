"""GITHUB_OUTPUT's multi-line syntax and the step summary's size cap."""

from __future__ import annotations

from pathlib import Path

from actions.kit import parse_outputs

from omg.github.outputs import SUMMARY_LIMIT, clip_markdown, write_outputs, write_summary


def test_outputs_survive_newlines_and_lookalike_delimiters(tmp_path: Path) -> None:
    out = tmp_path / "output"
    values = {"status": "paused", "note": "two\nlines\nEOF\nstatus<<x", "empty": ""}
    write_outputs(out, values)
    assert parse_outputs(out.read_text()) == values  # read as the runner reads it


def test_a_summary_is_cut_on_a_line_under_githubs_limit(tmp_path: Path) -> None:
    rows = "".join(f"| row {i} | é |\n" for i in range(200_000))
    summary = tmp_path / "summary.md"
    write_summary(summary, rows)
    data = summary.read_bytes()
    assert len(data) < SUMMARY_LIMIT
    assert b"bytes cut to stay under GitHub's size limit" in data
    kept = data.decode().split("\n_…")[0]
    assert kept.endswith("|\n")


def test_a_short_text_is_left_alone() -> None:
    assert clip_markdown("hello\n") == "hello\n"


def test_outputs_and_the_summary_are_masked(tmp_path: Path) -> None:
    from omg.mask import Masker

    mask = Masker.of(["ghs_outputCanary99"])
    write_outputs(tmp_path / "output", {"note": "a ghs_outputCanary99 b"}, mask=mask)
    write_summary(tmp_path / "summary.md", "| ghs_outputCanary99 |\n", mask=mask)
    assert parse_outputs((tmp_path / "output").read_text()) == {"note": "a *** b"}
    assert (tmp_path / "summary.md").read_text() == "| *** |\n"
