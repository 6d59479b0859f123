"""`omg leg`'s fast path reads its command line and the ``OMG_*`` variables as the typer app
does, or leaves them to typer."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from omg.cli import fastleg, jobs
from omg.cli.app import command
from omg.cli.job_commands import leg_command

ROOT = Path(__file__).resolve().parents[2]


def action_env() -> dict[str, str]:
    """The ``OMG_*`` variables omg's action gives `omg leg` when no input is given: each
    input's default, most of them the empty string."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == "leg"]
    out = {}
    for name, expr in step["env"].items():
        if name.startswith("OMG_") and expr.startswith("${{ inputs."):
            out[name] = str(action["inputs"][expr[len("${{ inputs.") : -3]].get("default", ""))
    return out


ACTION = action_env()
NUMBERS = {
    "OMG_MAX_MINUTES": "1.5",
    "OMG_MAX_NODES": "0",
    "OMG_MAX_JOBS": "256",
    "OMG_LIMIT_WAIT": "86400",
    "OMG_PR_BUDGET_USD": "5",
    "OMG_DAY_BUDGET_USD": "0.25",
}
WORDS = {
    "OMG_GRAPH": "g.yaml",
    "OMG_RUN_ID": "r1",
    "OMG_PUSH": "upstream",
    "OMG_DISPATCH_WORKFLOW": "w.yml",
    "OMG_NODE": "n1",
    "OMG_BASE": "abc123",
    "OMG_ON_SCHEDULE": "start",
    "OMG_HAND_OFF": "out",
    "OMG_INPUTS": "who=x",
}
#: Command lines and environments the fast path reads.
READ: list[tuple[list[str], dict[str, str]]] = [
    ([], {}),
    ([], ACTION),  # the action's: every input passed, empty when not given
    (["--hand-off", "/tmp/handoff"], ACTION),
    (["--node", "n1"], ACTION | {"OMG_NODE": "n1"}),
    (["--node", "n1", "--hand-off", "/tmp/handoff"], ACTION | {"OMG_NODE": "n1"}),
    (["--node", ""], ACTION),  # the action's `--node "$OMG_NODE"` with the input empty
    (["--fold"], ACTION),
    (["--fold", "--hand-off", "/tmp/fanout"], ACTION),
    ([], NUMBERS),
    ([], WORDS),
    ([], {"OMG_MAX_MINUTES": "0", "OMG_MAX_JOBS": "1", "OMG_LIMIT_WAIT": "0.0"}),
    ([], {"OMG_MAX_NODES": "007", "OMG_PR_BUDGET_USD": "0"}),  # 0: the body refuses it
    ([], {"OMG_ON_SCHEDULE": "sometimes", "OMG_FOLD": ""}),  # the body refuses it, both ways
    (["--run-id", "", "--push=", "--node="], WORDS),  # the command line wins, empty or not
    (["--hand-off", "", "--graph", "other.yaml", "--base=main"], WORDS),
    (["-i", "a=b", "--input", "c=d=e", "--input=", "-i", "f=g"], {"OMG_INPUTS": "k=v"}),
    (["--runs-dir", "runs", "--max-jobs", "3", "--max-minutes=2", "--max-nodes", "9"], {}),
    (["--pr-budget-usd", "1.25", "--day-budget-usd=10", "--limit-wait", "300"], NUMBERS),
    (["--dispatch-workflow", "x.yml", "--on-schedule", "continue", "--fold"], {}),
    ([], {"OMG_FOLD": "true", "OMG_HAND_OFF": "entries"}),  # a fold job given by variables
    ([], {"OMG_FOLD": "1"}),
    ([], {"OMG_FOLD": " Yes "}),
    ([], {"OMG_FOLD": "off"}),
    ([], {"OMG_FOLD": " "}),
    (["--fold"], {"OMG_FOLD": "maybe"}),  # the flag given: typer never reads the variable
]
#: What the fast path leaves to typer: its command line, then its environment.
LEFT_TO_TYPER: list[tuple[list[str], dict[str, str]]] = [
    (["--help"], {}),
    (["-h"], {}),
    (["--fold", "--help"], {}),
    (["--unknown"], {}),
    (["extra"], {}),
    (["--", "--fold"], {}),
    (["--fold", "--fold"], {}),
    (["--node", "a", "--node", "b"], {}),
    (["--fold=yes"], {}),
    (["--node"], {}),
    (["--node", "--fold"], {}),
    (["--node", "-x"], {}),
    (["--hand-off=-"], {}),
    (["-ia=b"], {}),
    (["-i=a=b"], {}),
    (["--max-jobs", "0"], {}),
    (["--max-jobs", "257"], {}),
    (["--max-minutes", "1e3"], {}),
    ([], {"OMG_MAX_JOBS": "0"}),
    ([], {"OMG_MAX_JOBS": "257"}),
    ([], {"OMG_MAX_JOBS": " 2"}),
    ([], {"OMG_MAX_JOBS": "1_0"}),
    ([], {"OMG_MAX_JOBS": "+3"}),
    ([], {"OMG_MAX_NODES": "-1"}),
    ([], {"OMG_MAX_NODES": "٣"}),  # a digit to int(), not to the plain form
    ([], {"OMG_MAX_NODES": "1" * 19}),
    ([], {"OMG_MAX_MINUTES": "inf"}),
    ([], {"OMG_MAX_MINUTES": ".5"}),
    ([], {"OMG_MAX_MINUTES": "5."}),
    ([], {"OMG_MAX_MINUTES": "-0"}),
    ([], {"OMG_LIMIT_WAIT": "86401"}),
    ([], {"OMG_LIMIT_WAIT": "86400.5"}),
    ([], {"OMG_PR_BUDGET_USD": "nan"}),
    ([], {"OMG_DAY_BUDGET_USD": "1,5"}),
    ([], {"OMG_FOLD": "maybe"}),
    ([], {"OMG_FOLD": "2"}),
    ([], {"OMG_FOLD": "ja"}),
    ([], {"_OMG_COMPLETE": "bash_complete"}),
    ([], {"_OMG_COMPLETE": ""}),
]


def ids(case: tuple[list[str], dict[str, str]]) -> str:
    """A case's name: its variables (the action's, when it has them all, as one word), then
    its command line."""
    argv, env = case
    action = ACTION.keys() <= env.keys()
    given = [f"{k}={v!r}" for k, v in env.items() if not (action and ACTION.get(k) == v)]
    return " ".join(["[action]"] * action + [*given, "leg", *argv])


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The process's environment without any ``OMG_*`` variable or shell completion's."""
    for name in list(os.environ):
        if name.startswith(("OMG_", "_OMG_")):
            monkeypatch.delenv(name)
    return monkeypatch


def typer_leg(argv: list[str]) -> Any:
    """typer's `omg leg` (the app's click command, as the entry point runs it) on ``argv``,
    with the process's environment; its exit code."""
    group: Any = command()
    return group.main(["leg", *argv], prog_name="omg", standalone_mode=False)


def typer_gives(argv: list[str]) -> jobs.LegLine:
    """What typer's `omg leg` hands its body for ``argv`` with the process's environment: click's
    values for each parameter (typer then makes a ``Path`` parameter's text a ``Path``), each to
    its field (`leg_command` hands them in its own order: a test below holds it to the fields')."""
    group: Any = command()
    params = dict(group.commands["leg"].make_context("leg", list(argv)).params)
    params["inputs"] = tuple(params.pop("input") or ())
    for name in fastleg.PATHS:
        if params[name] is not None:
            params[name] = Path(params[name])
    return jobs.LegLine(**params)


@pytest.mark.parametrize("case", READ, ids=ids)
def test_a_plain_command_line_and_environment_are_read_as_typer_reads_them(
    case: tuple[list[str], dict[str, str]], environ: pytest.MonkeyPatch
) -> None:
    argv, env = case
    for name, value in env.items():
        environ.setenv(name, value)
    given = fastleg.parse(["leg", *argv], dict(os.environ))
    assert given is not None
    assert dataclasses.asdict(given) == dataclasses.asdict(typer_gives(argv))


@pytest.mark.parametrize("case", LEFT_TO_TYPER, ids=ids)
def test_anything_else_is_left_to_typer(case: tuple[list[str], dict[str, str]]) -> None:
    argv, env = case
    assert fastleg.parse(["leg", *argv], env) is None


def test_another_command_is_not_read_as_omg_leg() -> None:
    assert fastleg.parse(["publish", "dir"], {}) is None
    assert fastleg.parse([], {}) is None


def test_a_path_that_exists_unreadable_is_left_to_typer_which_refuses_it(
    tmp_path: Path, environ: pytest.MonkeyPatch
) -> None:
    (tmp_path / "g.yaml").write_text("")
    (tmp_path / ".omg" / "runs").mkdir(parents=True)
    environ.chdir(tmp_path)
    environ.setattr(os, "access", lambda *_, **__: False)  # as if unreadable, even to root
    unreadable = [(["--graph", "g.yaml"], ""), ([], "g.yaml"), ([], "")]
    for argv, hand_off in unreadable:  # the last: the default runs directory, typer checks it
        environ.setenv("OMG_HAND_OFF", hand_off)
        assert fastleg.parse(["leg", *argv], {"OMG_HAND_OFF": hand_off}) is None
        with pytest.raises(Exception, match="is not readable"):
            typer_leg(argv)
    (tmp_path / ".omg" / "runs").rmdir()
    assert fastleg.parse(["leg", "--hand-off", "absent"], {}) is not None


def kind(param: Any) -> str:
    """How typer converts a parameter of `omg leg`, by its click type."""
    return type(param.type).__name__


def test_the_fast_paths_options_are_the_commands() -> None:
    group: Any = command()
    params = group.commands["leg"].params
    declared = {p.name: (tuple(p.opts), p.envvar) for p in params}
    assert declared == fastleg.OPTIONS
    kinds = {p.name: kind(p) for p in params}
    assert {n for n, k in kinds.items() if k == "TyperPath"} == fastleg.PATHS
    assert {n for n, k in kinds.items() if k in ("IntRange", "IntParamType")} == fastleg.WHOLES
    floats = {n for n, k in kinds.items() if k in ("FloatRange", "FloatParamType")}
    assert floats == fastleg.AMOUNTS
    assert {n for n, k in kinds.items() if k == "BoolParamType"} == {fastleg.FLAG}
    [flag] = [p for p in params if p.name == fastleg.FLAG]
    assert type(flag.type).bool_states == fastleg.BOOLEAN
    ranged = {p.name: p.type for p in params if hasattr(p.type, "min")}
    assert {n: (t.min, t.max) for n, t in ranged.items()} == fastleg.RANGES
    assert not any(t.min_open or t.max_open or t.clamp for t in ranged.values())
    for p in params:
        if kind(p) == "TyperPath":  # typer's check of a path: only that it is readable
            t = p.type
            assert (t.exists, t.writable, t.resolve_path, t.allow_dash) == (False,) * 4
            assert (t.file_okay, t.dir_okay) == (True, True)
    assert Path(next(p.default for p in params if p.name == "runs_dir")) == fastleg.DEFAULT_RUNS


def test_the_body_takes_the_commands_parameters_in_its_order() -> None:
    import inspect

    named = [f.name for f in dataclasses.fields(jobs.LegLine)]
    parameters = list(inspect.signature(leg_command).parameters)
    assert named == ["inputs" if p == "input" else p for p in parameters]


def omg(
    argv: list[str], env: dict[str, str], cwd: Path, via_typer: bool = False
) -> subprocess.CompletedProcess[str]:
    """`omg ARGV` in a fresh interpreter (the entry point, or the typer app's) with ``env``
    added to a clean environment, its last stderr line saying whether typer was imported."""
    entry = "from omg.cli.app import main" if via_typer else "from omg.__main__ import main"
    code = (
        f"import sys; sys.argv = ['omg', *{argv!r}]\nimport atexit\n"
        "atexit.register(lambda: print('typer' in sys.modules, 'omg.ci.job' in sys.modules, "
        "file=sys.stderr))\n"
        f"{entry}\nmain()"
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OMG_", "_OMG_", "GITHUB_"))}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=base | env
    )


@pytest.mark.parametrize(
    "case",
    [
        ([], ACTION),  # outside GitHub Actions: refused by the job
        (["--node", "n1", "--hand-off", "h"], ACTION | {"GITHUB_EVENT_NAME": "push"}),
        (["--fold"], ACTION | {"OMG_PR_BUDGET_USD": "0"}),
        ([], ACTION | {"OMG_ON_SCHEDULE": "sometimes"}),
        ([], ACTION | {"OMG_INPUTS": "novalue"}),
        ([], ACTION | {"OMG_NODE": "\udcff"}),  # not UTF-8: the same refusal
    ],
    ids=ids,
)
def test_a_leg_on_the_fast_path_imports_no_typer_and_ends_as_typers(
    case: tuple[list[str], dict[str, str]], tmp_path: Path
) -> None:
    argv, env = case
    fast, slow = omg(["leg", *argv], env, tmp_path), omg(["leg", *argv], env, tmp_path, True)
    assert fast.returncode == slow.returncode != 0
    assert fast.stdout == slow.stdout
    assert fast.stderr.splitlines()[:-1] == slow.stderr.splitlines()[:-1]
    assert fast.stderr.splitlines()[-1] == "False True"  # the job's body ran, typer never loaded
    assert slow.stderr.splitlines()[-1] == "True True"


@pytest.mark.parametrize(
    "env",
    [{"OMG_MAX_JOBS": "0"}, {"OMG_LIMIT_WAIT": "1e9"}, {"OMG_FOLD": "maybe"}],
    ids=lambda env: " ".join(f"{k}={v}" for k, v in env.items()),
)
def test_an_unusual_value_still_gets_typers_refusal(env: dict[str, str], tmp_path: Path) -> None:
    res = omg(["leg"], ACTION | env, tmp_path)
    assert res.returncode == 2, res.stderr
    assert "Invalid value for" in res.stderr and "Traceback" not in res.stderr
    assert res.stderr.splitlines()[-1] == "True False"  # typer answered; no job started
