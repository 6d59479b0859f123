"""No line of DESIGN.md runs past 700 characters: a package table row says what its package is
for and points to the package's docstring for the module list; long text is split there."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The longest line DESIGN.md may hold, in characters (a table row is one line).
LONGEST = 700


def long_lines(text: str, longest: int = LONGEST) -> list[tuple[int, int, str]]:
    """(line number, length, its first words) of each line of ``text`` past ``longest``."""
    return [
        (n, len(line), line[:40])
        for n, line in enumerate(text.splitlines(), start=1)
        if len(line) > longest
    ]


def test_no_line_of_design_md_runs_past_700_characters() -> None:
    found = long_lines((ROOT / "DESIGN.md").read_text())
    assert not found, f"DESIGN.md's lines over {LONGEST} characters (line, length, start): {found}"


def test_a_long_line_is_found_and_counted_in_characters() -> None:
    text = "short\n" + "é" * 700 + "\n| `omg/x/` | " + "w" * 700 + " |\n"
    assert long_lines(text) == [(3, 715, "| `omg/x/` | " + "w" * 27)]
