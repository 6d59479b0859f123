"""DESIGN.md's package table names every module of omg, in the row of its package."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "omg"


def table_rows(design: str) -> dict[str, str]:
    """What each row of the package table says, by the names in its first cell."""
    rows: dict[str, str] = {}
    for line in design.splitlines():
        cells = line.split("|")
        if line.startswith("| `omg/") and len(cells) > 3:
            for name in re.findall(r"`omg/([^`]+)`", cells[1]):
                rows[name] = cells[2]
    return rows


def unnamed(design: str, modules: list[str]) -> list[str]:
    """The modules (paths under omg/) that the table does not name."""
    rows = table_rows(design)
    out = []
    for rel in modules:
        package, _, rest = rel.rpartition("/")
        if not package:
            found = rel in rows
        else:
            top = package.split("/")[0] + "/"
            stem = rest.removesuffix(".py")
            found = (
                rest == "__init__.py" or re.search(rf"\b{stem}\b", rows.get(top, "")) is not None
            )
        if not found:
            out.append(rel)
    return out


def test_the_package_table_names_every_module() -> None:
    modules = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))
    missing = unnamed((ROOT / "DESIGN.md").read_text(), [m for m in modules if m != "__init__.py"])
    assert not missing, f"DESIGN.md's package table does not name {missing}"


def test_a_module_the_table_leaves_out_is_found() -> None:
    design = "| `omg/kinds.py` | the sets |\n| `omg/leg/` | one leg: `start`, `loop` |\n"
    modules = [
        "kinds.py",
        "mask.py",
        "leg/start.py",
        "leg/loop.py",
        "leg/admit.py",
        "leg/__init__.py",
    ]
    assert unnamed(design, modules) == ["mask.py", "leg/admit.py"]
