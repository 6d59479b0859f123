"""DESIGN.md's decisions stand under a heading per area, so a reader finds the one they need
without reading them all."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The areas of the decisions, in the order DESIGN.md gives them.
AREAS = [
    "Load and refusal",
    "Shell safety",
    "One leg",
    "Agent runtimes",
    "Records and replay",
    "Spend",
    "Git and the run branch",
    "The GitHub job",
    "Statistics and pages",
    "Start-up",
    "Tests",
    "Secrets",
]


def areas(design: str) -> list[tuple[str, int]]:
    """The headings under ``## Decisions``, each with the number of decisions (bullets) under
    it; decisions above the first heading are counted under ``""``."""
    out: list[tuple[str, int]] = []
    inside = False
    for line in design.splitlines():
        if line.startswith("## "):
            inside = line == "## Decisions"
        elif not inside:
            continue
        elif line.startswith("### "):
            out.append((line.removeprefix("### "), 0))
        elif line.startswith("- "):
            if not out:
                out.append(("", 0))
            out[-1] = (out[-1][0], out[-1][1] + 1)
    return out


def test_every_decision_stands_under_its_area() -> None:
    found = areas((ROOT / "DESIGN.md").read_text())
    assert [name for name, _ in found] == AREAS, f"DESIGN.md's decisions are grouped as {found}"
    empty = [name for name, count in found if not count]
    assert not empty, f"DESIGN.md's decision areas {empty} hold no decision"


def test_decisions_without_a_heading_are_found() -> None:
    design = (
        "## Files\n\n- a file\n\n## Decisions\n\n- loose\n\n### One leg\n\n- a\n  b\n- c\n\n"
        "### Spend\n\n### Secrets\n\n- d\n\n## Rooms\n\n- e\n"
    )
    assert areas(design) == [("", 1), ("One leg", 2), ("Spend", 0), ("Secrets", 1)]
