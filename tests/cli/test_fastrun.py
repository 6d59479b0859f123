"""`omg run`'s and `omg resume`'s fast path reads a command line as the typer app does, or
leaves it to typer."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command

from omg.cli import fastrun
from omg.cli.app import app

READ = [
    ["g.yaml"],
    ["g.yaml", "--no-commit"],
    ["--no-commit", "g.yaml", "--by-node"],
    ["g.yaml", "--executions"],
    ["g.yaml", "-i", "who=x", "--input", "a=b=c", "--input=e="],
    ["g.yaml", "--run-id", "r1", "--runs-dir", "runs", "--base=main", "--push", "origin"],
    ["g.yaml", "-c", "3", "--max-nodes", "0", "--max-minutes", "1.5"],
    ["g.yaml", "--concurrency=12", "--max-minutes=7", "--rehearse", "s.yaml"],
    ["g.yaml", "--format", "text", "--run-id="],
]
READ_RESUME = [
    ["r1"],
    ["r1", "--runs-dir", "runs", "--no-commit", "--by-node"],
    ["r1", "--executions"],
    ["--retry-failed", "r1", "-i", "k=v", "--push=origin", "-c", "2", "--max-nodes", "5"],
    ["r1", "--max-minutes", "0.5", "--rehearse", "s.yaml", "--format=text"],
]
LEFT_TO_TYPER = [
    [],
    ["--help"],
    ["g.yaml", "--help"],
    ["g.yaml", "--dry-run"],
    ["g.yaml", "--format", "json"],
    ["g.yaml", "--format", "yaml"],
    ["g.yaml", "other.yaml"],
    ["g.yaml", "--run-id"],
    ["g.yaml", "--run-id", "--no-commit"],
    ["g.yaml", "--run-id", "a", "--run-id", "b"],
    ["g.yaml", "--no-commit", "--no-commit"],
    ["g.yaml", "-c", "0"],
    ["g.yaml", "-c", "1_0"],
    ["g.yaml", "-c", " 2"],
    ["g.yaml", "-c2"],
    ["g.yaml", "--max-minutes", "inf"],
    ["g.yaml", "--max-minutes", "1e3"],
    ["g.yaml", "-c", "9" * 5000],  # past int's limit on digits: typer's refusal, no traceback
    ["g.yaml", "--max-nodes", "1" * 19],
    ["g.yaml", "--no-commit=yes"],
    ["g.yaml", "--unknown"],
    ["-", "--no-commit"],
    ["--", "g.yaml"],
    ["g.yaml", "--retry-failed"],
]
RESUME_LEFT_TO_TYPER = [
    [],
    ["r1", "--approve", "gate"],
    ["r1", "--reject", "gate", "--reason", "no"],
    ["r1", "--retry-failed", "--guidance", "words"],
    ["r1", "--by", "me"],
    ["r1", "--fetch", "origin"],
    ["r1", "--approve-spend", "5"],
    ["r1", "--dry-run"],
    ["r1", "--format", "json"],
    ["r1", "--run-id", "r2"],
    ["r1", "--base", "main"],
    ["r1", "--retry-failed", "--retry-failed"],
]


def typer_reads(command: str, argv: list[str]) -> dict[str, Any]:
    """The parameters typer's `omg COMMAND` receives for ``argv`` (click's values, with
    typer's one conversion after it: a ``Path`` parameter's string made a ``Path``), those the
    fast path never takes checked at their defaults and left out."""
    group = get_command(app)
    params: dict[str, Any] = dict(group.commands[command].make_context(command, argv).params)  # type: ignore[attr-defined]
    params["inputs"] = list(params.pop("input") or [])
    for name in ("path", "runs_dir", "rehearse"):
        if params.get(name) is not None:
            params[name] = Path(params[name])
    defaults = {"dry_run": False, "format": "text"}
    if command == "resume":
        defaults |= {"approve": None, "reject": None, "reason": "", "by": None}
        defaults |= {"guidance": None, "fetch": None, "approve_spend": None}
    assert {k: params.pop(k) for k in defaults} == defaults
    return params


def fast_reads(given: fastrun.RunLine) -> dict[str, Any]:
    """What the fast path read, named as typer names it for the command."""
    read = dataclasses.asdict(given)
    command, first = read.pop("command"), read.pop("first")
    if command == "run":
        read.pop("retry_failed")
        return {"path": Path(first), **read}
    read.pop("base")
    return {**read, "run_id": first}


def shown(argv: list[str]) -> str:
    """A test's id: the command line, a long argument by its length."""
    return " ".join(a if len(a) <= 40 else f"<{len(a)} characters>" for a in argv)


@pytest.mark.parametrize(
    ("command", "argv"),
    [*(("run", a) for a in READ), *(("resume", a) for a in READ_RESUME)],
    ids=lambda x: x if isinstance(x, str) else shown(x),
)
def test_a_plain_command_line_is_read_as_typer_reads_it(
    command: str, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in fastrun.TYPER_ENV:
        monkeypatch.delenv(name, raising=False)
    given = fastrun.parse([command, *argv], {})
    assert given is not None
    assert fast_reads(given) == typer_reads(command, argv)


@pytest.mark.parametrize(
    ("command", "argv"),
    [*(("run", a) for a in LEFT_TO_TYPER), *(("resume", a) for a in RESUME_LEFT_TO_TYPER)],
    ids=lambda x: x if isinstance(x, str) else shown(x),
)
def test_anything_else_is_left_to_typer(command: str, argv: list[str]) -> None:
    assert fastrun.parse([command, *argv], {}) is None


@pytest.mark.parametrize("name", fastrun.TYPER_ENV)
def test_a_variable_typer_reads_leaves_the_command_to_typer(name: str) -> None:
    assert fastrun.parse(["run", "g.yaml"], {name: "5"}) is None
    assert fastrun.parse(["resume", "r1"], {name: "5"}) is None


#: What a run of shell nodes never needs: typer, the lint's advisories, the model proxy's server.
UNUSED = ("typer", "omg.graph.advise", "omg.modelproxy.server", "http.server")


def omg(argv: list[str], cwd: Path, *, via_typer: bool = False) -> subprocess.CompletedProcess[str]:
    """`omg ARGV` in a fresh interpreter (the entry point, or the typer app's), its last
    stderr line saying whether typer was imported, the line before which of ``UNUSED`` were."""
    entry = "from omg.cli.app import main" if via_typer else "from omg.__main__ import main"
    code = (
        f"import sys; sys.argv = ['omg', *{argv!r}]\nimport atexit\n"
        f"atexit.register(lambda: print('typer' in sys.modules, file=sys.stderr))\n"
        f"atexit.register(lambda: print([m for m in {UNUSED!r} if m in sys.modules], "
        "file=sys.stderr))\n"
        f"{entry}\nmain()"
    )
    env = {k: v for k, v in os.environ.items() if k not in fastrun.TYPER_ENV}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, env=env
    )


def test_omg_run_runs_its_graph_without_importing_typer(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text("name: g\nnodes:\n  - {id: a, run: 'echo hi > out.txt'}\n")
    res = omg(["run", "g.yaml", "--no-commit", "--run-id", "r"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "run 'r' passed." in res.stdout
    assert res.stderr.splitlines()[-2:] == ["[]", "False"]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "missing.yaml", "--no-commit"],
        ["run", "bad.yaml", "--no-commit"],
        ["run", "good.yaml", "--no-commit", "--run-id", "../x"],
        ["run", "good.yaml", "--no-commit", "-i", "novalue"],
        ["run", "good.yaml", "--push", "origin", "--no-commit"],
        ["resume", "nosuchrun", "--no-commit"],
        ["resume", "../x", "--no-commit"],
        ["resume", "nosuchrun", "--push", "origin", "--no-commit"],
    ],
    ids=" ".join,
)
def test_a_refusal_on_the_fast_path_is_typers_word_for_word(
    argv: list[str], tmp_path: Path
) -> None:
    (tmp_path / "bad.yaml").write_text("name: g\nnodes:\n  - {id: a, run: 1, bogus: 2}\n")
    (tmp_path / "good.yaml").write_text("name: g\nnodes:\n  - {id: a, run: 'true'}\n")
    fast, slow = omg(argv, tmp_path), omg(argv, tmp_path, via_typer=True)
    assert fast.returncode == slow.returncode != 0
    assert fast.stdout == slow.stdout
    assert fast.stderr.splitlines()[:-2] == slow.stderr.splitlines()[:-2]
    assert (fast.stderr.splitlines()[-1], slow.stderr.splitlines()[-1]) == ("False", "True")


def test_a_path_that_exists_unreadable_is_left_to_typer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """typer refuses a path it cannot read (the graph, the runs directory, the rehearsal
    script); as root every file reads, so the refusal is staged through ``os.access``."""
    for name in ("g.yaml", "s.yaml"):
        (tmp_path / name).write_text("")
    (tmp_path / "runs").mkdir()
    monkeypatch.chdir(tmp_path)
    assert fastrun.parse(["run", "g.yaml", "--runs-dir", "runs"], {}) is not None
    monkeypatch.setattr(os, "access", lambda *_, **__: False)
    for argv in (["g.yaml"], ["absent.yaml", "--runs-dir", "runs"],
                 ["absent.yaml", "--rehearse", "s.yaml"]):  # fmt: skip
        assert fastrun.parse(["run", *argv], {}) is None, argv
    assert fastrun.parse(["resume", "r1", "--runs-dir", "runs"], {}) is None
    assert fastrun.parse(["run", "absent.yaml", "--runs-dir", "absent"], {}) is not None
