"""A runtime's name stays in its own places: outside ``omg/runners/`` only the declarations
(``omg/runtimes.py``) and a few words to a user name claude, and no module of ``omg/graph/``
names any runtime — its rules reach the loader through ``omg/runtimes.py`` alone."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "omg"
MODULES = sorted(PACKAGE.rglob("*.py"))
#: The agent runtimes, as their names are spelled in code.
RUNTIME_NAMES = ("claude", "codex")
#: The modules outside omg/runners/ that may name claude in code: the declarations, the stub
#: model's default model name, and the ledger's words on what a rehearsal spent.
NAMES_CLAUDE = {"omg/runtimes.py", "omg/stubmodel/server.py", "omg/cli/ledger.py"}


def rel(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants in ``tree`` (prose about the product, not code)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def code_words(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every string constant but a docstring, and every name, attribute,
    argument, definition and import in ``source`` — what its code says (comments are not)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docs:
                yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.arg | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.arg if isinstance(node, ast.arg) else node.name
        elif isinstance(node, ast.keyword) and node.arg is not None:
            yield node.lineno, node.arg
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, " ".join([node.module or "", *(a.name for a in node.names)])
        elif isinstance(node, ast.Import):
            yield node.lineno, " ".join(a.name for a in node.names)


def naming(word: str, paths: list[Path]) -> dict[str, list[int]]:
    """The modules among ``paths`` whose code says ``word`` (any case), with the lines."""
    found: dict[str, list[int]] = {}
    for path in paths:
        lines = sorted({n for n, text in code_words(path.read_text()) if word in text.lower()})
        if lines:
            found[rel(path)] = lines
    return found


def test_outside_the_runners_at_most_three_modules_name_claude_in_code() -> None:
    outside = [p for p in MODULES if not rel(p).startswith("omg/runners/")]
    found = naming("claude", outside)
    assert set(found) <= NAMES_CLAUDE, f"claude named in code outside omg/runners/: {found}"
    assert len(NAMES_CLAUDE) <= 3


def test_no_graph_module_names_a_runtime_in_code() -> None:
    graph = [p for p in MODULES if rel(p).startswith("omg/graph/")]
    for name in RUNTIME_NAMES:
        found = naming(name, graph)
        assert not found, f"{name} named in omg/graph/ {found}: declare it in omg/runtimes.py"


def test_the_name_check_sees_code_and_passes_over_prose() -> None:
    source = (
        '"""A docstring about claude."""\n'
        "# a comment about claude\n"
        "def f(claude_bin: str) -> str:\n"
        '    """claude, again."""\n'
        "    return CLAUDE\n"
        'MESSAGE = f"the {x} CLI: claude"\n'
        "from omg.runners.claude import ClaudeRunner\n"
    )
    lines = sorted({n for n, text in code_words(source) if "claude" in text.lower()})
    assert lines == [3, 5, 6, 7]
