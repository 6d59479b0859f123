"""The depth of omg's import graph, counted two ways: the longest chain of modules that
importing one module imports in turn is at most ``MAX_CHAIN`` modules long, and counting the
imports inside functions too, at most ``MAX_CHAIN_ALL``.

Counted at load: ``import`` / ``from … import`` statements that run when the module is
imported (at its top level, inside a top-level ``if`` or ``try``). Counted in all: those and
every import inside a function or method (it runs when the function is called: the lazy
imports that keep `omg lint` and `omg status` light still tie the modules together). Never
counted: imports under ``if TYPE_CHECKING:`` (they never run). ``from omg.x import y`` imports
the module ``omg.x.y`` when there is one. A submodule naming its own package adds nothing: the
package is being imported already when its submodule is.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "omg"
MAX_CHAIN = 10
MAX_CHAIN_ALL = 12


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def _import_time(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run when the module is imported."""
    out: list[ast.stmt] = []
    for node in statements:
        out.append(node)
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                out += _import_time(node.body)
            out += _import_time(node.orelse)
        elif isinstance(node, ast.Try):
            out += _import_time(node.body) + _import_time(node.orelse)
            out += _import_time(node.finalbody)
            for handler in node.handlers:
                out += _import_time(handler.body)
    return out


def _every_run(statements: list[ast.stmt]) -> list[ast.AST]:
    """Every node of the module that may run: all but the bodies of ``if TYPE_CHECKING:``."""
    out: list[ast.AST] = []
    for node in statements:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out += [n for s in node.orelse for n in _every_run([s])]
            continue
        out.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                out += _every_run([child])
            else:
                out += list(ast.walk(child))
    return out


def imported_at_load(source: str, me: str, known: set[str], lazy: bool = False) -> set[str]:
    """The omg modules that importing module ``me`` (its text ``source``) imports directly;
    ``lazy``: and those its functions import when they run."""
    names: set[str] = set()
    body = ast.parse(source).body
    for node in _every_run(body) if lazy else _import_time(body):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {m for m in names if m in known and m != me and not (me + ".").startswith(m + ".")}


class ImportCycle(AssertionError):
    """Modules that import each other (a lazy import can close a loop no load-time check sees)."""


def longest_chain(graph: Mapping[str, set[str]]) -> tuple[str, ...]:
    """The longest path of the import graph; ImportCycle names the loop when there is one."""
    visiting: list[str] = []

    @cache
    def from_(module: str) -> tuple[str, ...]:
        if module in visiting:
            loop = [*visiting[visiting.index(module) :], module]
            raise ImportCycle("modules import each other: " + " → ".join(loop))
        visiting.append(module)
        best: tuple[str, ...] = ()
        for dep in sorted(graph.get(module, ())):
            chain = from_(dep)
            if len(chain) > len(best):
                best = chain
        visiting.pop()
        return (module, *best)

    return max((from_(m) for m in sorted(graph)), key=len, default=())


def omg_graph(lazy: bool = False) -> dict[str, set[str]]:
    paths = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    known = set(paths)
    return {m: imported_at_load(p.read_text(), m, known, lazy) for m, p in paths.items()}


def test_the_longest_import_chain_is_at_most_ten_modules() -> None:
    chain = longest_chain(omg_graph())
    assert len(chain) >= 3, "the import graph was not read"
    assert len(chain) <= MAX_CHAIN, (
        f"an import chain of {len(chain)} modules (at most {MAX_CHAIN}): " + " → ".join(chain)
    )


def test_counting_the_imports_inside_functions_the_longest_chain_stays_in_its_bound() -> None:
    chain = longest_chain(omg_graph(lazy=True))
    assert len(chain) >= len(longest_chain(omg_graph())), "the lazy imports were not read"
    assert len(chain) <= MAX_CHAIN_ALL, (
        f"counting imports inside functions, an import chain of {len(chain)} modules (at most "
        f"{MAX_CHAIN_ALL}): " + " → ".join(chain)
    )


def test_the_chain_follows_module_level_imports_only() -> None:
    known = {"omg.a", "omg.b", "omg.c", "omg.p", "omg.p.q"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import omg.b\n"
        "try:\n    from omg.p import q\nexcept ImportError:\n    pass\n"
        "if TYPE_CHECKING:\n    import omg.c\n"
        "def later():\n    import omg.c\n"
    )
    assert imported_at_load(source, "omg.a", known) == {"omg.b", "omg.p", "omg.p.q"}
    assert imported_at_load("from omg.p import x\n", "omg.p.q", known) == set()


def test_the_lazy_count_adds_imports_inside_functions_but_never_type_checking_ones() -> None:
    known = {"omg.a", "omg.b", "omg.c", "omg.d", "omg.e"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import omg.b\n"
        "if TYPE_CHECKING:\n    import omg.c\nelse:\n    import omg.e\n"
        "def later():\n    import omg.d\n"
        "class K:\n    def m(self):\n        if TYPE_CHECKING:\n            import omg.c\n"
    )
    assert imported_at_load(source, "omg.a", known, lazy=True) == {"omg.b", "omg.d", "omg.e"}
    assert imported_at_load(source, "omg.a", known) == {"omg.b", "omg.e"}


def test_the_longest_chain_is_found_in_a_table_of_graphs() -> None:
    cases: list[tuple[dict[str, set[str]], tuple[str, ...]]] = [
        ({}, ()),
        ({"a": set()}, ("a",)),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, ("a", "b", "c")),
        ({"a": {"b", "d"}, "b": set(), "d": {"e"}, "e": {"f"}, "f": set()}, ("a", "d", "e", "f")),
        ({"x": {"y"}, "y": set(), "a": {"b"}, "b": {"c"}, "c": set()}, ("a", "b", "c")),
    ]
    for graph, want in cases:
        assert longest_chain(graph) == want, graph


def test_a_loop_of_imports_is_named_not_followed_forever() -> None:
    with pytest.raises(ImportCycle, match="b → c → b"):
        longest_chain({"a": {"b"}, "b": {"c"}, "c": {"b"}})
