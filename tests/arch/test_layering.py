"""The architecture's rules, checked on the source: who may import what, who reads GITHUB_*,
who prints or exits, and that the import graph has no cycle."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "omg"
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))

#: The layer each top-level name of omg belongs to, and the layers it may import.
MAY_IMPORT: dict[str, set[str]] = {
    "kinds": set(),
    "errors": {"kinds"},
    "dotomg": set(),
    "fastschema": set(),
    "strictjson": set(),
    "replyschema": set(),
    "replytext": {"strictjson", "replyschema"},
    "secretname": set(),
    "mask": {"secretname"},
    "spend": set(),
    "spendbook": {"errors", "strictjson"},
    "nodefile": set(),
    "graphdata": set(),
    "words": set(),
    "runtimes": set(),
    "records": {"kinds", "graphdata"},
    "graph": {
        "kinds",
        "errors",
        "fastschema",
        "graphdata",
        "runtimes",
        "strictjson",
        "replyschema",
    },
    "schedule": {"graph", "kinds", "errors", "records"},
    "matrix": {"graph", "schedule", "kinds", "errors"},
    "prune": {"errors"},
    "state": {
        "kinds",
        "errors",
        "fastschema",
        "strictjson",
        "mask",
        "spend",
        "records",
        "nodefile",
        "graphdata",
        "replyschema",
    },
    "runners": {"graph", "kinds", "errors", "spend", "runtimes", "modelproxy", "replyschema"},
    "git": {"errors", "dotomg", "nodefile"},
    "github": {"errors", "kinds", "mask", "words"},
    "stubmodel": {"errors", "graph", "runners", "replyschema"},
    "modelproxy": {"errors", "kinds", "spend"},
    "stats": {"kinds", "errors", "fastschema", "records", "graphdata", "state"},
    "pages": {"stats", "graph", "schedule", "state", "kinds", "records", "graphdata"},
    "ledgerrows": {"graph", "state", "words"},
    "leg": {
        "fastschema",
        "strictjson",
        "graph",
        "schedule",
        "matrix",
        "state",
        "runners",
        "git",
        "words",
        "kinds",
        "errors",
        "dotomg",
        "mask",
        "secretname",
        "spend",
        "spendbook",
        "nodefile",
        "records",
        "graphdata",
        "modelproxy",
        "replyschema",
        "replytext",
    },
    "lint": {"cli"},  # the `python -m omg.lint` shim
    "__main__": {"cli"},
    "__init__": set(),
}
#: The GitHub Actions job (read the trigger, plan, act, report): above the leg it runs.
MAY_IMPORT["ci"] = MAY_IMPORT["leg"] | {"leg", "github", "ledgerrows"}
#: The command line: above the job and everything else.
MAY_IMPORT["cli"] = MAY_IMPORT["ci"] | {"ci", "stubmodel", "stats", "pages", "prune"}
#: Modules that must do no I/O at all: the pure core.
PURE = (
    "graph/model.py",
    "graph/build.py",
    "graph/placeholders.py",
    "graph/tokens.py",
    "graph/durations.py",
    "graph/findings.py",
    "graph/verdicts.py",
    "graph/shell/scan.py",
    "graph/shell/lexer.py",
    "graph/shell/frames.py",
    "graph/shell/flow.py",
    "graph/shell/refusals.py",
    "graph/shell/words.py",
    "graph/shell/programs.py",
    "schedule.py",
    "matrix.py",
    "prune.py",
    "state/fold.py",
    "state/wave.py",
    "records.py",
    "graphdata.py",
    "runtimes.py",
    "kinds.py",
    "fastschema.py",
    "strictjson.py",
    "replyschema.py",
    "replytext.py",
    "secretname.py",
    "graph/structured.py",
    "spend.py",
    "spendbook.py",
    "runners/limits.py",
    "leg/wait.py",
    "nodefile.py",
    "github/commitstatus.py",
    "words.py",
    "ledgerrows.py",
    "ci/actions.py",
    "ci/facts.py",
    "ci/pull_request.py",
    "ci/comment.py",
    "ci/dispatch.py",
    "ci/schedule.py",
    "ci/fanout.py",
    "ci/pace.py",
    "ci/report_md.py",
    "graph/workflows.py",
    "stats/facts.py",
    "stats/figures.py",
    "stats/summary.py",
    "stats/compare.py",
    "stats/tables.py",
    "pages/page.py",
    "pages/svg.py",
    "pages/drawing.py",
    "pages/timeline.py",
    "pages/runpage.py",
    "pages/statspage.py",
    "modelproxy/usage.py",
    "runners/claude/prices.py",
    "modelproxy/headers.py",
    "modelproxy/answers.py",
    "ci/handoff/limits.py",
    "ci/findingtable.py",
)
IO_MODULES = {"os", "subprocess", "pygit2", "yaml", "shutil", "socket", "tempfile", "fcntl"}


def module_name(path: Path) -> str:
    rel_parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if rel_parts[-1] == "__init__" and len(rel_parts) > 1:
        rel_parts.pop()
    return ".".join(rel_parts)


@cache
def imports(path: Path) -> frozenset[str]:
    """Every module ``path`` imports, at the top or inside a function (absolute names)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            # `from omg.cli import runs` imports the module omg.cli.runs
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(out)


def omg_imports(path: Path) -> set[str]:
    known = {module_name(p) for p in MODULES}
    return {m for m in imports(path) if m in known and m not in (module_name(path), "omg")}


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def rel(path: Path) -> str:
    return path.relative_to(PACKAGE.parent).as_posix()


def test_the_package_has_modules_to_check() -> None:
    assert len(MODULES) > 40
    assert {layer(module_name(p)) for p in MODULES} <= set(MAY_IMPORT)


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_each_module_imports_only_the_layers_beneath_it(path: Path) -> None:
    own = layer(module_name(path))
    allowed = MAY_IMPORT[own] | {own}
    wrong = sorted(m for m in omg_imports(path) if layer(m) not in allowed)
    assert not wrong, f"{rel(path)} (layer {own}) imports {wrong}; it may use {sorted(allowed)}"


def test_the_import_graph_has_no_cycle() -> None:
    graph = {module_name(p): omg_imports(p) for p in MODULES}
    # A package's __init__ re-exports its modules; importing them back from the package is fine
    # in Python, so the edge package → submodule is not followed.
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not d.startswith(name + ".")}
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycle = [*path[path.index(dep) :], dep]
                raise AssertionError("import cycle: " + " → ".join(cycle))
            if dep not in state:
                visit(dep)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


#: The packages that may speak to GitHub (``github/``): the job (``ci/``) and the command line.
GITHUB_USERS = ("omg/github/", "omg/ci/", "omg/cli/")
#: The command line's modules on the job's path: they hand the job to ``ci/``, which reads
#: GitHub's context itself.
JOB_PATH = ("omg/cli/job_commands.py", "omg/cli/jobs.py", "omg/cli/fastleg.py")


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_job_and_the_command_line_import_github(path: Path) -> None:
    uses = sorted(m for m in omg_imports(path) if layer(m) == "github")
    assert not uses or rel(path).startswith(GITHUB_USERS), f"{rel(path)} imports {uses}"
    if rel(path) in JOB_PATH:
        assert not uses, f"{rel(path)} imports {uses}: the job reads GitHub in omg/ci/"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_git_package_imports_pygit2(path: Path) -> None:
    uses = any(m == "pygit2" or m.startswith("pygit2.") for m in imports(path))
    assert not uses or rel(path).startswith("omg/git/"), f"{rel(path)} imports pygit2"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_github_package_reads_github_variables(path: Path) -> None:
    if rel(path).startswith("omg/github/"):
        return
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            var = re.fullmatch(r"GITHUB_[A-Z_]+", node.value)
            assert var is None, f"{rel(path)} names {node.value}; read GITHUB_* in omg/github/"


def _prints_or_exits(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id in ("print", "exit", "quit"):
            return f"{fn.id}()"
        if isinstance(fn, ast.Attribute):
            owner = ast.unparse(fn.value)
            if fn.attr in ("exit", "_exit") and owner in ("sys", "os"):
                return f"{owner}.{fn.attr}()"
            if fn.attr == "write" and owner in ("sys.stdout", "sys.stderr"):
                return f"{owner}.write()"
            if fn.attr == "Exit" and owner == "typer":
                return "typer.Exit"
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(exc, ast.Name) and exc.id == "SystemExit":
            return "raise SystemExit"
    return None


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_cli_prints_or_picks_exit_codes(path: Path) -> None:
    if rel(path).startswith("omg/cli/"):
        return
    found = {
        f"{what} at line {getattr(node, 'lineno', '?')}"
        for node in ast.walk(ast.parse(path.read_text()))
        if (what := _prints_or_exits(node)) is not None
    }
    assert not found, f"{rel(path)}: {sorted(found)}; only omg/cli/ prints or exits"


def test_the_print_check_can_see_a_print() -> None:
    assert _prints_or_exits(ast.parse("print('x')").body[0].value) == "print()"  # type: ignore[attr-defined]
    assert _prints_or_exits(ast.parse("raise SystemExit(3)").body[0]) == "raise SystemExit"
    assert _prints_or_exits(ast.parse("sys.stderr.write('x')").body[0].value) is not None  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", PURE)
def test_pure_modules_do_no_io(name: str) -> None:
    found = {m.split(".")[0] for m in imports(PACKAGE / name)} & IO_MODULES
    assert not found, f"omg/{name} is pure but imports {sorted(found)}"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_only_the_chokepoint_starts_processes(path: Path) -> None:
    if rel(path) == "omg/runners/process.py":
        return
    assert "subprocess" not in imports(path), f"{rel(path)} imports subprocess; use spawn"


@pytest.mark.parametrize("path", MODULES, ids=rel)
def test_every_module_opens_with_a_one_line_docstring(path: Path) -> None:
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc, f"{rel(path)} has no module docstring"
    assert doc.splitlines()[0].strip(), f"{rel(path)}: the first docstring line names the module"


@pytest.mark.parametrize(
    "path", [p for p in MODULES if p.name == "__init__.py" and p.parent != PACKAGE], ids=rel
)
def test_every_package_names_its_public_names(path: Path) -> None:
    tree = ast.parse(path.read_text())
    names = [
        n
        for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
    ]
    assert names, f"{rel(path)} has no __all__: say what the package offers"


#: Each runtime that lives in a folder of its own: ``omg/runners/<runtime>/``.
RUNTIME_DIRS = sorted(p.parent for p in (PACKAGE / "runners").glob("*/__init__.py"))
#: The one module outside a runtime's folder that may import it: the list of runtimes.
REGISTRY = "omg/runners/registry.py"
#: Names that are the claude runtime's alone (its endpoint, auth and settings variables).
CLAUDE_SPECIFIC = re.compile(r"\b(ANTHROPIC|CLAUDE)_[A-Z_]*")


def _outside(folder: Path) -> list[Path]:
    return [p for p in MODULES if folder not in p.parents]


def test_each_runtime_has_a_folder_and_the_registry_lists_it() -> None:
    from omg.runners.registry import agent_runtimes

    assert [d.name for d in RUNTIME_DIRS] == sorted(agent_runtimes())
    registry = imports(PACKAGE.parent / REGISTRY)
    for folder in RUNTIME_DIRS:
        assert any(m.startswith(f"omg.runners.{folder.name}") for m in registry), folder.name


@pytest.mark.parametrize("folder", RUNTIME_DIRS, ids=lambda p: p.name)
def test_only_the_registry_imports_a_runtime(folder: Path) -> None:
    own = f"omg.runners.{folder.name}"
    wrong = sorted(
        rel(p)
        for p in _outside(folder)
        if rel(p) != REGISTRY and any(m == own or m.startswith(own + ".") for m in imports(p))
    )
    assert not wrong, f"{wrong} import {own}; go through the Runner seam (omg/runners/base.py)"


def _names(path: Path, pattern: re.Pattern[str]) -> list[str]:
    """Every string constant (docstrings too) in ``path`` that names ``pattern``, with its line."""
    return [
        f"{m.group(0)} at line {node.lineno}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for m in [pattern.search(node.value)]
        if m is not None
    ]


@pytest.mark.parametrize("path", _outside(PACKAGE / "runners" / "claude"), ids=rel)
def test_only_the_claude_runtime_names_its_variables(path: Path) -> None:
    found = _names(path, CLAUDE_SPECIFIC)
    assert not found, f"{rel(path)} names {found}; that is omg/runners/claude/'s to know"


def test_each_runtimes_variables_are_named_only_in_its_folder() -> None:
    from omg.runners.registry import default_runners

    for name, runner in default_runners().items():
        if not runner.env_prefixes:
            continue
        folder = PACKAGE / "runners" / name
        pattern = re.compile("|".join(re.escape(p) for p in runner.env_prefixes))
        leaks = {rel(p): _names(p, pattern) for p in _outside(folder)}
        assert not any(leaks.values()), f"runtime {name!r} leaks: {leaks}"


def test_the_seam_check_can_see_a_leak() -> None:
    own = PACKAGE / "runners" / "claude" / "rehearsal.py"
    assert any(n.startswith("ANTHROPIC_BASE_URL") for n in _names(own, CLAUDE_SPECIFIC))
    assert CLAUDE_SPECIFIC.search("a docstring about $CLAUDE_CONFIG_DIR")
    assert not CLAUDE_SPECIFIC.search("OMG_CLAUDE_BIN is claude's and so are claude's words")


#: Modules that name a runtime by its kind, as they must: the registry and the declarations.
NAMES_RUNTIMES = {REGISTRY, "omg/runtimes.py"}


def _declared(path: Path, values: set[str]) -> list[str]:
    """Every string constant in ``path`` that is one of ``values`` or holds one of them."""
    return [
        f"{node.value!r} at line {node.lineno}"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if node.value in values or any(len(v) > 12 and v in node.value for v in values)
    ]


def test_a_runtimes_declarations_are_spelled_only_in_its_folder() -> None:
    from omg.runners.registry import agents

    for name, runner in agents().items():
        folder = PACKAGE / "runners" / name
        values = {v for v in (*runner.room_env, runner.pin_hint.split("@X")[0]) if v}
        if not values:
            continue
        leaks = {
            rel(p): _declared(p, values) for p in _outside(folder) if rel(p) not in NAMES_RUNTIMES
        }
        assert not any(leaks.values()), f"runtime {name!r}'s declarations spelled in {leaks}"


def test_the_declaration_check_can_see_a_leak(tmp_path: Path) -> None:
    leak = tmp_path / "runs.py"
    leak.write_text('home = root / "claude"\nhint = "npm install @anthropic-ai/claude-code@X"\n')
    found = _declared(leak, {"claude", "npm install @anthropic-ai/claude-code"})
    assert len(found) == 2, found
