"""The GitHub job's shape, checked on the source: its planners decide and read nothing
themselves, one executor acts and alone catches a lost race, and no room is too big for what
it holds — the command line's modules, and the job's classes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.arch.test_layering import PACKAGE, omg_imports, rel

CI = sorted((PACKAGE / "ci").glob("*.py"))
CLI = sorted((PACKAGE / "cli").glob("*.py"))
#: The planners: pure decisions over the trigger and the answers to their questions.
PLANNERS = ("pull_request", "comment", "dispatch", "schedule", "fanout")
#: What a planner may use of ci/: the actions it returns and the questions it asks.
PLANNER_MAY_USE = {"omg.ci", "omg.ci.actions", "omg.ci.facts", "omg.ci.context"}
#: The one module that may catch a lost race (MovedOn) in the job or the command line.
EXECUTOR = "omg/ci/act.py"
#: The most lines a command-line module, a job's class, and the code of `omg leg` and `omg
#: publish` (their commands' bodies and the printers they hand in) may take.
MAX_CLI_MODULE, MAX_CI_CLASS, MAX_LEG = 300, 200, 60
#: `omg leg`'s and `omg publish`'s bodies (their typer commands and `omg leg`'s fast path call
#: them): the functions that hand the job to `ci/`.
JOB_COMMANDS = "jobs.py"
JOB_FUNCTIONS = ("leg", "publish", "say", "annotate")
#: Where `ci/`'s jobs are imported, to be handed to those bodies.
JOB_CALLERS = {"job_commands.py": {"omg.ci.job", "omg.ci.publish"}, "fastleg.py": {"omg.ci.job"}}


def catches(path: Path, name: str) -> list[int]:
    """The lines of ``path`` whose ``except`` names ``name``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ExceptHandler) and node.type is not None:
            caught = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if any(ast.unparse(c).split(".")[-1] == name for c in caught):
                found.append(node.lineno)
    return found


def test_the_planners_are_there() -> None:
    assert {p.stem for p in CI} >= set(PLANNERS)


@pytest.mark.parametrize("name", PLANNERS)
def test_a_planner_uses_no_part_of_the_job_that_reads_or_acts(name: str) -> None:
    path = PACKAGE / "ci" / f"{name}.py"
    wrong = sorted(
        m for m in omg_imports(path) if m.startswith("omg.ci") and m not in PLANNER_MAY_USE
    )
    assert not wrong, f"ci/{name}.py imports {wrong}: a planner asks `facts`, it reads nothing"


@pytest.mark.parametrize("path", CI + CLI, ids=rel)
def test_only_the_executor_catches_a_lost_race(path: Path) -> None:
    if rel(path) == EXECUTOR:
        assert catches(path, "MovedOn"), "the executor holds the race loop"
        return
    lines = catches(path, "MovedOn")
    assert not lines, f"{rel(path)} catches MovedOn at {lines}: only {EXECUTOR} does"


def test_the_race_check_sees_an_except(tmp_path: Path) -> None:
    code = tmp_path / "x.py"
    code.write_text("try:\n    pass\nexcept (OSError, errors.MovedOn):\n    pass\n")
    assert catches(code, "MovedOn") == [3]


@pytest.mark.parametrize("path", CLI, ids=rel)
def test_no_command_line_module_is_over_300_lines(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_CLI_MODULE, f"{rel(path)} is {lines} lines: split it by what it holds"


def body_lines(function: ast.FunctionDef) -> int:
    """The lines of ``function`` after its signature and docstring."""
    body = function.body[1:] if ast.get_docstring(function) else function.body
    return (function.end_lineno or function.lineno) - body[0].lineno + 1


def test_omg_leg_hands_the_job_to_ci_in_a_few_lines() -> None:
    path = PACKAGE / "cli" / JOB_COMMANDS
    functions = {
        node.name: node
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.FunctionDef) and node.name in JOB_FUNCTIONS
    }
    assert sorted(functions) == sorted(JOB_FUNCTIONS), f"{rel(path)} lost the job's commands"
    lines = sum(body_lines(f) for f in functions.values())
    assert lines <= MAX_LEG, f"{rel(path)}: the job's code takes {lines} lines: it belongs in ci/"
    for caller, handed in JOB_CALLERS.items():
        imported = omg_imports(PACKAGE / "cli" / caller)
        assert handed <= imported, f"cli/{caller} hands the job to {sorted(handed)}"


@pytest.mark.parametrize("path", CI + CLI, ids=rel)
def test_no_class_of_the_job_is_over_200_lines(path: Path) -> None:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            assert size <= MAX_CI_CLASS, f"{rel(path)}: class {node.name} is {size} lines"
