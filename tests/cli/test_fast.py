"""The CLI's fast paths behave exactly as the typer app they stand in for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from omg.cli import HELP

ROOT = Path(__file__).resolve().parents[2]


def test_the_fast_help_is_the_help_typer_renders() -> None:
    code = "import sys; sys.argv = ['omg', '--help']\nfrom omg.cli.app import app\napp()"
    env = {**os.environ, "COLUMNS": "80"}
    typer_help = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    ).stdout
    assert typer_help == HELP


def test_omg_help_answers_without_importing_typer() -> None:
    code = (
        "import sys; sys.argv = ['omg', '--help']\nfrom omg.cli import main\nmain()\n"
        "print('typer' in sys.modules, file=sys.stderr)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.stdout == HELP and res.stderr.strip() == "False"


def test_omg_lint_answers_without_importing_typer_or_jsonschema() -> None:
    code = (
        f"import sys; sys.argv = ['omg', 'lint', {str(ROOT / 'graphs')!r}]\n"
        "import atexit\n"
        "atexit.register(lambda: print(sorted(m for m in ('typer', 'jsonschema', 'pygit2') "
        "if m in sys.modules), file=sys.stderr))\n"
        "from omg.cli import main\nmain()"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert "demo.yaml: valid" in res.stdout
    assert res.stderr.strip().splitlines()[-1] == "[]"
