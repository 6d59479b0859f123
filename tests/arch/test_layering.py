"""The architecture's rules, checked on the source: who may import what, and who reads GITHUB_*."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "omg"
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))
PURE = (
    "graph/model.py",
    "graph/build.py",
    "schedule.py",
    "state/fold.py",
    "graph/placeholders.py",
    "graph/durations.py",
    "graph/findings.py",
)
IO_MODULES = {"os", "subprocess", "pygit2", "yaml", "shutil", "socket", "tempfile", "fcntl"}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def rel(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def test_the_package_has_modules_to_check() -> None:
    assert len(MODULES) > 20


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_git_package_imports_pygit2(path: Path) -> None:
    uses = any(m == "pygit2" or m.startswith("pygit2.") for m in imports(path))
    assert not uses or rel(path).startswith("omg/git/"), f"{rel(path)} imports pygit2"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_github_module_reads_github_variables(path: Path) -> None:
    text = path.read_text()
    if rel(path).startswith("omg/github/"):
        return
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            var = re.fullmatch(r"GITHUB_[A-Z_]+", node.value)
            assert var is None or node.value == "GITHUB_TOKEN", (
                f"{rel(path)} names {node.value}; read GITHUB_* in omg/github.py only"
            )


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_do_no_io(name: str) -> None:
    found = {m.split(".")[0] for m in imports(PACKAGE / name)} & IO_MODULES
    assert not found, f"omg/{name} is pure but imports {sorted(found)}"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_chokepoint_starts_processes(path: Path) -> None:
    if rel(path) == "omg/runners/process.py":
        return
    assert "subprocess" not in imports(path), f"{rel(path)} imports subprocess; use omg.proc.spawn"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_every_module_opens_with_a_one_line_docstring(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc, f"{rel(path)} has no module docstring"
    assert doc.splitlines()[0].strip(), f"{rel(path)}: the first docstring line names the module"
