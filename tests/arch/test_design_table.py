"""DESIGN.md's package table names every module of omg, in the row of its package — or, where
that row points to its package's docstring, in that docstring."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
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


def unnamed(design: str, modules: list[str], docs: Mapping[str, str] | None = None) -> list[str]:
    """The modules (paths under omg/) that the table does not name.

    A module is named by the row of its top package (a word of the row), unless that row points
    to the docstring of the module's own package (it names `omg/<package>/__init__.py`): then
    that docstring (``docs``, by package path) must name it in a code span.
    """
    rows = table_rows(design)
    out = []
    for rel in modules:
        package, _, rest = rel.rpartition("/")
        if not package:
            found = rel in rows
        elif rest == "__init__.py":
            found = True
        else:
            row = rows.get(package.split("/")[0] + "/", "")
            stem = rest.removesuffix(".py")
            if f"`omg/{package}/__init__.py`" in row:
                doc = (docs or {}).get(package, "")
                found = re.search(rf"`{re.escape(stem)}`", doc) is not None
            else:
                found = re.search(rf"\b{stem}\b", row) is not None
        if not found:
            out.append(rel)
    return out


def package_docs() -> dict[str, str]:
    """The docstring of each package of omg, by its path under omg/ (``graph/shell``)."""
    return {
        p.parent.relative_to(PACKAGE).as_posix(): ast.get_docstring(ast.parse(p.read_text())) or ""
        for p in PACKAGE.rglob("__init__.py")
    }


def test_the_package_table_names_every_module() -> None:
    design = (ROOT / "DESIGN.md").read_text()
    modules = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))
    missing = unnamed(design, [m for m in modules if m != "__init__.py"], package_docs())
    assert not missing, f"DESIGN.md's package table does not name {missing}"
    pointed = re.findall(r"`omg/([^`]+)/__init__\.py`", design)
    gone = [p for p in pointed if not (PACKAGE / p / "__init__.py").is_file()]
    assert not gone, f"DESIGN.md points to the docstrings of packages that are gone: {gone}"


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


def test_a_row_pointing_to_package_docstrings_is_checked_against_them() -> None:
    design = "| `omg/leg/` | one leg: see `omg/leg/__init__.py` and `omg/leg/ci/__init__.py` |\n"
    docs = {"leg": "One leg: `start`, and the loop.", "leg/ci": "CI jobs: ``jobs``, `admit`."}
    modules = [
        "leg/start.py",
        "leg/loop.py",
        "leg/ci/__init__.py",
        "leg/ci/jobs.py",
        "leg/ci/admit.py",
        "leg/ci/pace.py",
        "leg/other/start.py",
    ]
    assert unnamed(design, modules, docs) == ["leg/loop.py", "leg/ci/pace.py", "leg/other/start.py"]
